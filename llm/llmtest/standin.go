package llmtest

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/ollama/ollama/template"

	"github.com/existence-loop/sdk/llm"
)

// Stand-in server defaults, as a stock Ollama has them.
const (
	// DefaultServerContext is the window a request gets without num_ctx:
	// current Ollama's default for a small GPU (older versions used 2048).
	DefaultServerContext = 4096
	// DefaultQueue is OLLAMA_MAX_QUEUE's default: requests waiting for a
	// slot beyond which the server answers 503.
	DefaultQueue = 512
	// BusyMessage is Ollama's error text for a full queue, sent with 503.
	BusyMessage = "server busy, please try again.  maximum pending requests exceeded"
	// InputTooLongMessage is the older error text of Ollama's runner (up
	// to the 0.2x releases), sent with 400, for a prompt over the window
	// when the request asks not to truncate ("truncate": false); see
	// [ServerConfig].LegacyRefusal.
	InputTooLongMessage = "the input length exceeds the context length"
	// ContextSizeMessage is the current error text, a format taking the
	// prompt's tokens and the window: llama.cpp server's
	// exceed_context_size_error, which Ollama passes on since its runner
	// is llama.cpp's server. Sent with 400.
	ContextSizeMessage = "request (%d tokens) exceeds the available context size (%d tokens), try increasing it"
	// DefaultVersion is what /api/version reports by default: the Ollama
	// release whose API package the SDK builds against. It honours
	// "truncate" (since 0.12.6).
	DefaultVersion = "0.17.4"
	// LegacyVersion is what /api/version reports for a server that
	// ignores "truncate" ([ServerConfig].IgnoreTruncate): 0.12.5, the
	// last release without it, whose prompt_eval_count counts the whole
	// prompt.
	LegacyVersion = "0.12.5"
	// CacheCountVersion is what /api/version reports for a server that
	// ignores "truncate" and keeps a KV cache ([ServerConfig].CacheSlots):
	// 0.3.0, of the releases before 0.4.0 whose prompt_eval_count left out
	// the cached prefix.
	CacheCountVersion = "0.3.0"
	// numKeep is the tokens Ollama keeps at the head of a prompt it cuts
	// (the num_keep option's default).
	numKeep = 4
)

// ModelSpec is one model a stand-in server serves.
type ModelSpec struct {
	// Name is the model's name, e.g. "qwen3.5:9b" or "nomic-embed-text".
	Name string
	// Arch is its architecture, the prefix of the context length key in
	// /api/show's model_info ("qwen3" gives "qwen3.context_length");
	// default "qwen3", or "nomic-bert" for an embedding model.
	Arch string
	// ContextLength is the model's trained context length in tokens; the
	// server never grants more. Default 32768 (2048 for an embedding
	// model).
	ContextLength int
	// Embedding makes it an embedding model: it answers /api/embed and
	// /v1/embeddings, with [Embedding] vectors of EmbeddingDim dimensions
	// (default 768, as nomic-embed-text), and refuses chat.
	Embedding    bool
	EmbeddingDim int
}

func (m ModelSpec) withDefaults() ModelSpec {
	if m.Embedding {
		if m.Arch == "" {
			m.Arch = "nomic-bert"
		}
		if m.ContextLength <= 0 {
			m.ContextLength = 2048
		}
		if m.EmbeddingDim <= 0 {
			m.EmbeddingDim = 768
		}
		return m
	}
	if m.Arch == "" {
		m.Arch = "qwen3"
	}
	if m.ContextLength <= 0 {
		m.ContextLength = 32768
	}
	return m
}

// ServerConfig configures a stand-in model server ([NewServer]). The zero
// value is a stock Ollama with one model, qwen3.5:9b, a 4096-token
// default window, one slot and a queue of 512.
type ServerConfig struct {
	// Models the server serves; default one chat model, "qwen3.5:9b"
	// (32768 tokens). A request for another model gets the provider's
	// "not found" answer.
	Models []ModelSpec
	// Template is the chat template (Ollama's Go text/template form) that
	// /api/chat prompts are rendered with, through Ollama's template
	// package; "" means [OllamaTemplate]. The OpenAI-compatible endpoints
	// render messages in order, with the tools after the leading system
	// messages.
	Template string
	// DefaultContext is the window a request gets without num_ctx, and
	// the window of the OpenAI-compatible endpoints (which carry no
	// num_ctx): OLLAMA_CONTEXT_LENGTH. Default 4096.
	DefaultContext int
	// MaxContext caps the window the server grants whatever num_ctx asks,
	// as a server short of memory, or one whose OLLAMA_NUM_PARALLEL splits
	// the cache, does; 0 means the model's length. Prompts are cut (or
	// refused) at the granted window, and /api/ps shows what was asked.
	MaxContext int
	// IgnoreTruncate behaves as Ollama before the "truncate" request
	// field (before 0.12.6): a prompt over the window is always cut
	// silently, even when the request says "truncate": false.
	IgnoreTruncate bool
	// RefuseOverflow refuses every prompt over the window with HTTP 400,
	// whatever the request's "truncate" says, as llama.cpp's server does
	// (it never cuts a prompt). IgnoreTruncate wins over it.
	RefuseOverflow bool
	// LegacyRefusal refuses with Ollama's older wording,
	// [InputTooLongMessage], instead of the current one,
	// [ContextSizeMessage].
	LegacyRefusal bool
	// Version is what /api/version reports; default [DefaultVersion], or
	// with IgnoreTruncate [LegacyVersion] ([CacheCountVersion] with
	// CacheSlots too).
	Version string
	// CacheSlots is how many prompts per model the server keeps in its
	// KV cache, as llama.cpp's server and Ollama's runner keep the last
	// prompt of each slot; 0 keeps none. A prompt that shares a prefix
	// with a cached one (the longest such) is evaluated only after that
	// prefix. The entry is reused as Ollama's runner reuses a slot: only
	// when all of its content is a prefix of the new prompt; otherwise
	// the least recently used entry gets a copy of the shared prefix and
	// the new prompt, so two prompts that diverge (an agent's cycle and
	// its tool loop) need two entries. The
	// server counts only those tokens: Ollama's prompt_eval_count (as
	// Ollama reported it before 0.4.0 and in the first 0.30 releases, and
	// as llama.cpp's prompt_n does) and, on the "ollama" OpenAI flavor,
	// usage.prompt_tokens. The other OpenAI flavors report the whole
	// prompt in usage.prompt_tokens and the cached part in
	// usage.prompt_tokens_details.cached_tokens, as llama.cpp's server
	// and OpenAI do. At least one token is always evaluated. A cached
	// entry holds the prompt and the reply generated after it; a model
	// reloaded for a new window starts with an empty cache.
	CacheSlots int
	// CacheLongest makes the KV cache pick its entry as Ollama's runner
	// does by default (OLLAMA_MULTIUSER_CACHE unset, findLongestCacheSlot
	// in 0.17.4): the free entry sharing the longest prefix with the
	// prompt takes it, an empty entry sharing none, so a prompt that
	// shares a few leading tokens with another agent's cached prompt
	// evicts it while empty entries stay empty; ties go to the first
	// entry. With every entry in use nothing is served from the cache and
	// the prompt is kept nowhere. Without it the entries follow the
	// multi-user policy described at CacheSlots.
	CacheLongest bool
	// OpenAIFlavor is how the OpenAI-compatible endpoints answer a prompt
	// over the window: "openai" (default: 400 with code
	// context_length_exceeded), "vllm" (400 "This model's maximum context
	// length is N tokens..."), "llamacpp" (400 exceed_context_size_error
	// with n_ctx) or "ollama" (cut silently, as Ollama's /v1 does). Set to
	// another server's ("openai", "vllm", "llamacpp"), /api/version answers
	// 404, as that server would; unset or "ollama", it answers as Ollama.
	OpenAIFlavor string
	// Slots is how many requests run at once (OLLAMA_NUM_PARALLEL);
	// default 1. Queue is how many more may wait for a slot
	// (OLLAMA_MAX_QUEUE; default 512, negative for none); beyond that the
	// server answers 503 with [BusyMessage].
	Slots, Queue int
	// RetryAfter, when positive, is sent as the Retry-After header (in
	// whole seconds, rounded up) with every 503 for a full queue. Ollama
	// sends none; a proxy in front of it, or vLLM, may.
	RetryAfter time.Duration
	// Latency is how long a request holds its slot; LatencyFunc, when set,
	// decides per call instead. Sleep waits (default a timer that stops
	// when the request's context ends); tests inject one that returns at
	// once or blocks on a channel.
	Latency     time.Duration
	LatencyFunc func(c *Call) time.Duration
	Sleep       func(ctx context.Context, d time.Duration) error
	// Reply answers a chat request, seeing what the model would see (the
	// prompt after any cut). Nil answers a structured-output request with
	// a minimal existence reply and anything else with "ok".
	Reply func(c *Call) Answer
	// Record keeps every [Call] for [Server.Calls]. Off, only [Stats] are
	// kept (long runs).
	Record bool
	// OnQueue, when set, is called with the number of requests waiting
	// each time one finds every slot held and starts to wait (tests use it
	// to know a request is queued without polling).
	OnQueue func(waiting int)
}

// Call is one chat request as the stand-in model saw it.
type Call struct {
	// API is "ollama" (/api/chat) or "openai" (/v1/chat/completions).
	API string
	// Model is the requested model.
	Model string
	// Messages are the request's messages as sent, before any cut.
	Messages []llm.Message
	// Tools are the tool definitions sent.
	Tools []llm.ToolDef
	// Format is the structured-output schema sent, nil for none.
	Format json.RawMessage
	// NumCtx is the window the request asked for (0: none); Window the
	// window the server granted.
	NumCtx, Window int
	// Sent is the prompt's size in tokens as rendered; Kept what the model
	// saw. Cached is how many of the Kept tokens came from the KV cache
	// ([ServerConfig].CacheSlots), Evaluated how many were evaluated
	// (Kept − Cached): what Ollama reports as prompt_eval_count.
	Sent, Kept        int
	Cached, Evaluated int
	// Cut reports that the server cut the prompt (Kept < Sent).
	Cut bool
	// Prompt is the rendered prompt the model saw, after any cut: each
	// message as "<|role|>\n" and its content, tools as JSON after the
	// system messages.
	Prompt string
	// MaxTokens is the output limit asked for (num_predict, max_tokens).
	MaxTokens int

	plain bool // ScriptedReply without agentsReply (standin_agents.go)
}

// Answer is a stand-in model's answer to a [Call].
type Answer struct {
	// Text is the reply text; ToolCalls the tool calls it asks for.
	Text      string
	ToolCalls []llm.ToolCall
	// Status, when non-zero, makes the server answer with this HTTP status
	// and Error in the provider's error body instead.
	Status int
	Error  string
}

// Stats are a stand-in server's counters.
type Stats struct {
	// Requests counts every request to a generation or embedding endpoint;
	// Busy those refused with 503 because the queue was full.
	Requests, Busy int
	// Cut counts prompts cut silently; Refused prompts refused as too long.
	Cut, Refused int
	// Reloads counts model loads for a new window: the first request for
	// a model, then every change of the window asked for.
	Reloads int
	// Windows are the windows asked for (num_ctx, or the default), in the
	// order they were asked for, without repeats in a row.
	Windows []int
	// MaxSent is the largest prompt sent in tokens, before any cut.
	MaxSent int
	// PromptTokens and OutputTokens total what the server counted:
	// prompt tokens kept and tokens generated. EmbedTokens totals the
	// tokens embedded.
	PromptTokens, OutputTokens, EmbedTokens int
	// CachedTokens and EvaluatedTokens split PromptTokens: prompt tokens
	// served from the KV cache and prompt tokens evaluated (see
	// [Stats.CachedShare]).
	CachedTokens, EvaluatedTokens int
	// Running and Waiting are the requests holding a slot and waiting for
	// one now; MaxInFlight and MaxWaiting the most there were at once.
	Running, Waiting        int
	MaxInFlight, MaxWaiting int
	// SlotTime is the total time slots were held; divided by Slots and
	// the elapsed time it is the slots' utilisation.
	SlotTime time.Duration
}

// CachedShare returns the share of prompt tokens served from the KV cache,
// 0–1: CachedTokens / PromptTokens (0 before any prompt).
func (st Stats) CachedShare() float64 {
	if st.PromptTokens <= 0 {
		return 0
	}
	return float64(st.CachedTokens) / float64(st.PromptTokens)
}

// Server is a stand-in model server that speaks Ollama's API (/api/chat,
// /api/show, /api/embed, /api/tags, /api/ps, /api/version) and the
// OpenAI-compatible API (/v1/chat/completions, /v1/embeddings,
// /v1/models), with the limits of a real server: a default window, a
// window that silently drops the oldest tokens, Ollama's /api/show
// context length, slots and a queue that answers 503, latency, and
// deterministic embeddings. Its tokenizer is not characters / 4: words
// split into pieces of at most four letters, and every punctuation mark is
// a token, so token estimates must be calibrated against it as against a
// real server. It is safe for concurrent use.
type Server struct {
	cfg    ServerConfig
	models map[string]ModelSpec
	order  []string
	slots  chan struct{}
	start  time.Time

	mu      sync.Mutex
	waiting int
	running int
	loaded  map[string]int
	stats   Stats
	calls   []Call
	http    *httptest.Server
	// cache holds each model's KV-cache entries ([ServerConfig].CacheSlots).
	cache map[string][]*cacheEntry
	// ollama: /api/version answers (the OpenAI flavor is Ollama's or unset).
	ollama bool
	// tmpl renders Ollama chat requests; tmplErr is why it could not be
	// parsed, the answer to every such request.
	tmpl    *template.Template
	tmplErr error
	clock   uint64 // orders cache entries' use
}

// cacheEntry is one cached prompt (a slot of the KV cache): its tokens,
// when it was last used and whether a call is using it.
type cacheEntry struct {
	toks  []string
	used  uint64
	inUse bool // a call is being evaluated in it
}

// NewServer returns a stand-in server for cfg; serve it with
// [Server.Handler], or start it on loopback with [Server.Start].
func NewServer(cfg ServerConfig) *Server {
	if len(cfg.Models) == 0 {
		cfg.Models = []ModelSpec{{Name: "qwen3.5:9b"}}
	}
	if cfg.DefaultContext <= 0 {
		cfg.DefaultContext = DefaultServerContext
	}
	if cfg.Slots <= 0 {
		cfg.Slots = 1
	}
	switch {
	case cfg.Queue == 0:
		cfg.Queue = DefaultQueue
	case cfg.Queue < 0:
		cfg.Queue = 0
	}
	if cfg.Sleep == nil {
		cfg.Sleep = sleep
	}
	// /api/version answers as Ollama's unless the OpenAI-compatible
	// endpoints are another server's.
	ollama := cfg.OpenAIFlavor == "" || cfg.OpenAIFlavor == "ollama"
	if cfg.OpenAIFlavor == "" {
		cfg.OpenAIFlavor = "openai"
	}
	if cfg.Version == "" {
		cfg.Version = DefaultVersion
		switch {
		case cfg.IgnoreTruncate && cfg.CacheSlots > 0:
			cfg.Version = CacheCountVersion
		case cfg.IgnoreTruncate:
			cfg.Version = LegacyVersion
		}
	}
	s := &Server{cfg: cfg, models: map[string]ModelSpec{}, slots: make(chan struct{}, cfg.Slots), loaded: map[string]int{}, start: time.Now(),
		cache: map[string][]*cacheEntry{}, ollama: ollama}
	for _, m := range cfg.Models {
		m = m.withDefaults()
		s.models[m.Name] = m
		s.order = append(s.order, m.Name)
	}
	s.tmpl, s.tmplErr = template.Parse(cmp.Or(cfg.Template, OllamaTemplate))
	if s.tmplErr != nil {
		s.tmplErr = fmt.Errorf("llmtest: ServerConfig.Template: %w", s.tmplErr)
	}
	return s
}

// Start serves the stand-in on a loopback port until [Server.Close] and
// returns its base URL (http://127.0.0.1:PORT). Ollama clients use it as
// is; OpenAI-compatible clients append "/v1".
func (s *Server) Start() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.http == nil {
		s.http = httptest.NewServer(s.Handler())
	}
	return s.http.URL
}

// Close stops a server started with [Server.Start].
func (s *Server) Close() {
	s.mu.Lock()
	h := s.http
	s.mu.Unlock()
	if h != nil {
		h.CloseClientConnections()
		h.Close()
	}
}

// Handler returns the server's HTTP handler.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/chat", s.ollamaChat)
	mux.HandleFunc("POST /api/show", s.ollamaShow)
	mux.HandleFunc("POST /api/embed", s.ollamaEmbed)
	mux.HandleFunc("GET /api/tags", s.ollamaTags)
	mux.HandleFunc("GET /api/ps", s.ollamaPs)
	if s.ollama {
		mux.HandleFunc("GET /api/version", func(w http.ResponseWriter, _ *http.Request) {
			writeJSON(w, http.StatusOK, map[string]string{"version": s.cfg.Version})
		})
	}
	mux.HandleFunc("POST /v1/chat/completions", s.openaiChat)
	mux.HandleFunc("POST /v1/embeddings", s.openaiEmbed)
	mux.HandleFunc("GET /v1/models", s.openaiModels)
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("Ollama is running")) })
	return mux
}

// Stats returns a copy of the counters.
func (s *Server) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.stats
	st.Windows = slices.Clone(st.Windows)
	st.Running, st.Waiting = s.running, s.waiting
	return st
}

// Utilisation returns the share of slot time used since the server was
// created (0–1): Stats.SlotTime / (Slots × elapsed).
func (s *Server) Utilisation() float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	el := time.Since(s.start)
	if el <= 0 {
		return 0
	}
	return float64(s.stats.SlotTime) / (float64(s.cfg.Slots) * float64(el))
}

// Calls returns the recorded calls (with [ServerConfig].Record), oldest
// first.
func (s *Server) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.calls)
}

// retryAfter sets the Retry-After header of a 503 when configured.
func (s *Server) retryAfter(w http.ResponseWriter) {
	if d := s.cfg.RetryAfter; d > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int((d+time.Second-1)/time.Second)))
	}
}

// errBusy: the queue is full.
var errBusy = errors.New(BusyMessage)

// acquire takes a slot, waiting in the queue when all are held. It returns
// errBusy when the queue is full, or ctx's error. release gives the slot
// back and counts the time it was held.
func (s *Server) acquire(ctx context.Context) (release func(), err error) {
	s.mu.Lock()
	s.stats.Requests++
	if s.running >= s.cfg.Slots && s.waiting >= s.cfg.Queue {
		s.stats.Busy++
		s.mu.Unlock()
		return nil, errBusy
	}
	s.waiting++
	s.stats.MaxWaiting = max(s.stats.MaxWaiting, s.waiting)
	queued := s.running >= s.cfg.Slots
	waiting := s.waiting
	s.mu.Unlock()
	if queued && s.cfg.OnQueue != nil {
		s.cfg.OnQueue(waiting)
	}
	select {
	case s.slots <- struct{}{}:
	case <-ctx.Done():
		s.mu.Lock()
		s.waiting--
		s.mu.Unlock()
		return nil, ctx.Err()
	}
	held := time.Now()
	s.mu.Lock()
	s.waiting--
	s.running++
	s.stats.MaxInFlight = max(s.stats.MaxInFlight, s.running)
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		s.running--
		s.stats.SlotTime += time.Since(held)
		s.mu.Unlock()
		<-s.slots
	}, nil
}

// window returns the window granted for a request of model m asking for
// numCtx (0: the default), and counts a reload when the window asked for
// changes.
func (s *Server) window(m ModelSpec, numCtx int) int {
	asked := numCtx
	if asked <= 0 {
		asked = s.cfg.DefaultContext
	}
	s.mu.Lock()
	if prev, ok := s.loaded[m.Name]; !ok || prev != asked {
		s.loaded[m.Name] = asked
		s.stats.Reloads++
		s.stats.Windows = append(s.stats.Windows, asked)
		delete(s.cache, m.Name) // a reloaded model starts with an empty KV cache
	}
	s.mu.Unlock()
	w := min(asked, m.ContextLength)
	if s.cfg.MaxContext > 0 {
		w = min(w, s.cfg.MaxContext)
	}
	return w
}

// prepare renders the request's prompt for a window of window tokens and
// cuts it as Ollama does: whole messages from the oldest, keeping system
// messages and the last message, then, if the last message alone is too
// long, the tokens after the first few. With truncate false it cuts
// nothing and reports whether the prompt fits. It returns the tokens the
// model sees.
//
// render is the chat template: nil for the stand-in's own, which writes
// the messages in order with the tool definitions after the leading
// system messages (llama-server's Jinja templates do so).
func prepare(c *Call, truncate bool, render func([]llm.Message) ([]string, error)) (toks []string, fits bool, err error) {
	if render == nil {
		render = plainRender(c.Tools)
	}
	toks, err = render(c.Messages)
	if err != nil {
		return nil, false, err
	}
	c.Sent = len(toks)
	if len(toks) <= c.Window || !truncate {
		c.Kept, c.Prompt = len(toks), strings.Join(toks, "")
		return toks, len(toks) <= c.Window, nil
	}
	msgs := c.Messages
	for i := 0; i < len(msgs)-1 && len(toks) > c.Window; i++ {
		var keep []llm.Message
		for j, m := range msgs {
			if j > i || m.Role == llm.RoleSystem {
				keep = append(keep, m)
			}
		}
		if toks, err = render(keep); err != nil {
			return nil, false, err
		}
	}
	if len(toks) > c.Window {
		head := min(numKeep, c.Window-1)
		toks = append(toks[:head:head], toks[len(toks)-(c.Window-head):]...)
	}
	c.Kept, c.Prompt, c.Cut = len(toks), strings.Join(toks, ""), true
	return toks, true, nil
}

// plainRender is the stand-in's own chat template for tools.
func plainRender(tools []llm.ToolDef) func([]llm.Message) ([]string, error) {
	block := ""
	if len(tools) > 0 {
		t, _ := json.Marshal(tools)
		block = "<|tools|>\n" + string(t) + "\n"
	}
	return func(msgs []llm.Message) ([]string, error) {
		var b strings.Builder
		i := 0
		for ; i < len(msgs) && msgs[i].Role == llm.RoleSystem; i++ {
			writeMessage(&b, msgs[i])
		}
		b.WriteString(block)
		for ; i < len(msgs); i++ {
			writeMessage(&b, msgs[i])
		}
		b.WriteString("<|assistant|>\n")
		return Tokenize(b.String()), nil
	}
}

// overflow reports whether a prompt over the window is cut (true) or
// refused, for a request whose "truncate" field says truncate (nil: not
// sent, which means cut).
func (s *Server) overflow(truncate *bool) (cut bool) {
	switch {
	case s.cfg.IgnoreTruncate:
		return true
	case s.cfg.RefuseOverflow:
		return false
	}
	return truncate == nil || *truncate
}

// refusal is the error text for a prompt over the window.
func (s *Server) refusal(c *Call) string {
	if s.cfg.LegacyRefusal {
		return InputTooLongMessage
	}
	return fmt.Sprintf(ContextSizeMessage, c.Sent, c.Window)
}

// useCache looks the prompt toks of c up in its model's KV cache and
// sets c.Cached and c.Evaluated, choosing the entry as Ollama's runner does
// with several slots (its multi-user policy): the entry sharing the
// longest prefix with toks is reused when all of its content is a prefix
// of toks and no other call is using it; otherwise the least recently
// used free entry takes the prompt, first getting a copy of that longest
// common prefix, so the prefix is served from the cache either way and
// only the entry that is replaced differs. At most all tokens but the
// last are served from the cache (the last must be evaluated to sample
// from). With every entry in use (more calls at once than entries) the
// shared prefix is still served, as if copied into a scratch entry, and
// the prompt is kept nowhere (Ollama's runner has one entry per parallel
// sequence and so never finds none free). It returns the entry, marked in use until
// [Server.releaseCache]; nil without one.
func (s *Server) useCache(c *Call, toks []string) *cacheEntry {
	c.Evaluated = c.Kept
	if s.cfg.CacheSlots <= 0 || len(toks) == 0 {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.clock++
	entries := s.cache[c.Model]
	if len(entries) == 0 {
		entries = make([]*cacheEntry, s.cfg.CacheSlots)
		for i := range entries {
			entries[i] = &cacheEntry{}
		}
		s.cache[c.Model] = entries
	}
	if s.cfg.CacheLongest {
		return useLongest(c, entries, toks, s.clock)
	}
	var longest, oldest *cacheEntry
	common := -1
	for _, e := range entries {
		if n := commonPrefix(e.toks, toks); n > common {
			longest, common = e, n
		}
		if !e.inUse && (oldest == nil || e.used < oldest.used) {
			oldest = e
		}
	}
	c.Cached = min(common, len(toks)-1)
	c.Evaluated = c.Kept - c.Cached
	chosen := longest
	switch {
	case common == len(longest.toks) && !longest.inUse:
	case oldest == nil:
		return nil
	default:
		chosen = oldest
	}
	chosen.toks, chosen.used, chosen.inUse = slices.Clone(toks), s.clock, true
	return chosen
}

// useLongest is useCache's choice under [ServerConfig].CacheLongest: the
// free entry sharing the longest prefix with toks (the first of equals),
// nil with every entry in use.
func useLongest(c *Call, entries []*cacheEntry, toks []string, clock uint64) *cacheEntry {
	var chosen *cacheEntry
	common := -1
	for _, e := range entries {
		if e.inUse {
			continue
		}
		if n := commonPrefix(e.toks, toks); n > common {
			chosen, common = e, n
		}
	}
	if chosen == nil {
		return nil
	}
	c.Cached = min(common, len(toks)-1)
	c.Evaluated = c.Kept - c.Cached
	chosen.toks, chosen.used, chosen.inUse = slices.Clone(toks), clock, true
	return chosen
}

// extendCache appends the generated reply to the cache entry e, as a KV
// cache holds the reply's tokens after its prompt's.
func (s *Server) extendCache(e *cacheEntry, prompt []string, reply string) {
	if e == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(e.toks) == len(prompt) && commonPrefix(e.toks, prompt) == len(prompt) {
		e.toks = append(e.toks, Tokenize(reply)...)
	}
}

// releaseCache ends the use of the cache entry e that [Server.useCache]
// returned (nil is allowed), whether or not the call succeeded.
func (s *Server) releaseCache(e *cacheEntry) {
	if e == nil {
		return
	}
	s.mu.Lock()
	e.inUse = false
	s.mu.Unlock()
}

// commonPrefix is the number of leading tokens a and b share.
func commonPrefix(a, b []string) int {
	n := min(len(a), len(b))
	for i := range n {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

// writeMessage renders one message of the stand-in's chat template.
func writeMessage(b *strings.Builder, m llm.Message) {
	b.WriteString("<|" + string(m.Role) + "|>\n")
	b.WriteString(m.Content)
	for _, tc := range m.ToolCalls {
		b.WriteString("\n" + tc.Name + string(tc.Arguments))
	}
	b.WriteString("\n")
}

// reply runs the model: it asks cfg.Reply and holds the slot for the
// call's latency.
func (s *Server) reply(ctx context.Context, c *Call) (Answer, error) {
	var r Answer
	if s.cfg.Reply != nil {
		r = s.cfg.Reply(c)
	} else if len(c.Format) > 0 {
		r.Text = `{"action":"goal","content":"map the workspace","reasoning":"a stand-in model answered"}`
	} else {
		r.Text = "ok"
	}
	d := s.cfg.Latency
	if s.cfg.LatencyFunc != nil {
		d = s.cfg.LatencyFunc(c)
	}
	if d > 0 {
		if err := s.cfg.Sleep(ctx, d); err != nil {
			return Answer{}, err
		}
	}
	return r, nil
}

// record counts a finished call.
func (s *Server) record(c *Call, output int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c.Cut {
		s.stats.Cut++
	}
	s.stats.MaxSent = max(s.stats.MaxSent, c.Sent)
	s.stats.PromptTokens += c.Kept
	s.stats.CachedTokens += c.Cached
	s.stats.EvaluatedTokens += c.Evaluated
	s.stats.OutputTokens += output
	if s.cfg.Record {
		s.calls = append(s.calls, *c)
	}
}

func (s *Server) refused(c *Call) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stats.Refused++
	s.stats.MaxSent = max(s.stats.MaxSent, c.Sent)
	if s.cfg.Record {
		s.calls = append(s.calls, *c)
	}
}

// limitOutput cuts text to maxTokens tokens of the stand-in tokenizer and
// reports whether it cut (done reason "length").
func limitOutput(text string, maxTokens int) (string, int, bool) {
	toks := Tokenize(text)
	if maxTokens > 0 && len(toks) > maxTokens {
		return strings.Join(toks[:maxTokens], ""), maxTokens, true
	}
	return text, len(toks), false
}

// Tokenize splits text into the stand-in tokenizer's tokens, whose
// concatenation is text: a run of letters (with the white space before it)
// in pieces of at most four letters, digits in pieces of at most three, and
// every other character alone. English prose comes to about one token per
// four characters, JSON and code to more, as with real tokenizers.
func Tokenize(text string) []string {
	var out []string
	for len(text) > 0 {
		n := tokenLen(text)
		out = append(out, text[:n])
		text = text[n:]
	}
	return out
}

// tokenLen returns the length in bytes of the first token of s.
func tokenLen(s string) int {
	i := 0
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++ // blanks join the token after them
	}
	if i == len(s) {
		return i
	}
	r, size := utf8.DecodeRuneInString(s[i:])
	var (
		limit int
		class func(rune) bool
	)
	switch {
	case unicode.IsLetter(r):
		limit, class = 4, unicode.IsLetter
	case unicode.IsDigit(r):
		limit, class = 3, unicode.IsDigit
	case i > 0 && r == '\n':
		return i // blanks before a line break are a token of their own
	default:
		return i + size
	}
	for n := 0; i < len(s) && n < limit; n++ {
		r, size = utf8.DecodeRuneInString(s[i:])
		if !class(r) {
			break
		}
		i += size
	}
	return i
}

// CountTokens returns len(Tokenize(text)).
func CountTokens(text string) int { return len(Tokenize(text)) }

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
