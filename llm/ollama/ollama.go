package ollama

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ollama/ollama/api"

	"github.com/existence-loop/sdk/internal/lookup"
	"github.com/existence-loop/sdk/llm"
	"github.com/existence-loop/sdk/llm/ctxwindow"
	"github.com/existence-loop/sdk/llm/middleware"
)

// DefaultURL is the Ollama server used when neither [Config.URL] nor the
// OLLAMA_HOST environment variable is set.
const DefaultURL = "http://127.0.0.1:11434"

// Provider is the provider name this adapter puts in its errors
// ([llm.StatusError], [llm.UnavailableError], [llm.ModelNotFoundError]).
const Provider = "ollama"

// Config configures a [Model]. Only Model is required.
type Config struct {
	// URL is the Ollama server's base URL, e.g. "http://127.0.0.1:11434".
	// Empty means $OLLAMA_HOST, else [DefaultURL]. As with OLLAMA_HOST, a
	// value without a scheme gets "http://" and a host without a port gets
	// 11434 ("localhost" → "http://localhost:11434").
	URL string
	// Model is the model name, e.g. "qwen3.5:9b". Required.
	Model string
	// HTTPClient sends the requests. Nil means a client without a timeout:
	// timeouts come from the context (see middleware.WithTimeout). The client is
	// not modified; the adapter wraps a copy's transport.
	HTTPClient *http.Client
	// Think turns the model's reasoning on or off. Nil means off: the wire
	// always carries "think": false unless Think points to true (spec §7:
	// the original sent "think": false). Leaving "think" out would
	// not do: Ollama then turns thinking on for models that support it.
	Think *bool
	// KeepAlive is how long the server keeps the model loaded after a call.
	// Nil leaves it to the server (5 minutes by default); 0 unloads the
	// model at once; a negative value keeps it loaded indefinitely, which
	// is what the original sent ("keep_alive": -1, spec §7).
	KeepAlive *time.Duration
	// NumCtx is the largest context window in tokens the operator allows
	// (KV-cache memory grows with it). Each request asks for the smallest
	// of [ctxwindow.Steps] (4096, 8192, 16384, …) that holds its prompt
	// and the reply's reserve, never less than a window asked for before
	// (Ollama reloads the model whenever num_ctx changes), and never more
	// than this ceiling, the model's trained length (read once from
	// /api/show) or the window the server was seen to grant. 0 means the
	// model's length capped at 32768 ([ctxwindow.DefaultMaxWindow]). A prompt
	// that cannot fit is refused with an [*llm.ContextLengthError] before
	// it is sent, so that the caller shrinks it: Ollama would silently cut
	// its beginning.
	NumCtx int
	// HoldNumCtx, when set, is the num_ctx every request asks for at
	// least, chosen at start for the run's largest request kind (capped at
	// the usable window; -1 means the usable window itself), so that no
	// request of the run steps num_ctx up: Ollama reloads the model
	// whenever num_ctx changes. With it the adapter also reads /api/ps
	// once and holds the larger window the server already runs the model
	// with (another process's), up to the usable window. 0 steps up as
	// prompts grow.
	HoldNumCtx int
	// JSONMode sends format "json" instead of the request's JSON Schema when
	// [llm.Request.Format] is set, for models or servers whose schema-
	// constrained decoding misbehaves. A request without Format is free text
	// either way.
	JSONMode bool
	// Stream asks for a streamed (NDJSON) reply, which Generate aggregates.
	// Streaming and non-streaming give the same [llm.Response].
	Stream bool
	// Options are extra model options (Ollama's "options" object, e.g.
	// "top_k", "repeat_penalty"). The window the adapter picks (num_ctx) and
	// the request's Temperature, Seed and MaxTokens override the same keys
	// here.
	Options map[string]any
	// Estimator is the token estimator to calibrate; nil means a new one
	// per model. Share one between adapters for the same server and model.
	Estimator *llm.TokenEstimator
	// AllowRedirect are the hosts (a name or address, optionally with
	// ":port") a redirect may lead to besides the URL's own origin
	// (scheme, host and port). A redirect anywhere else is not followed:
	// the call fails with an error matching [llm.ErrRedirect] that names
	// both origins, and the other host receives nothing (the rule of
	// internal/origin, as for existence/minds).
	AllowRedirect []string
}

// Model is an [llm.Model] backed by an Ollama server's /api/chat endpoint,
// through the official github.com/ollama/ollama/api client. It is safe for
// concurrent use.
type Model struct {
	cfg    Config
	base   *url.URL
	client *api.Client

	mu      sync.Mutex
	windows map[string]*window // by model name
}

// window is what the adapter knows of one model's context window.
type window struct {
	shown   lookup.Once[struct{}] // /api/show and /api/version, read once
	tracker ctxwindow.Tracker
	whole   bool // the server's prompt_eval_count includes cached tokens (wholeCounts)
}

var _ llm.Model = (*Model)(nil)

// New returns a Model for cfg. It makes no network call.
//
// Errors: cfg.Model is empty, or the URL (from cfg.URL or OLLAMA_HOST) is not
// a valid http or https URL with a host (an empty port, as in
// "http://127.0.0.1:", is refused rather than taken as port 80).
func New(cfg Config) (*Model, error) {
	if strings.TrimSpace(cfg.Model) == "" {
		return nil, errors.New("ollama: Config.Model is required (for example \"qwen3.5:9b\")")
	}
	base, err := resolveURL(cfg.URL)
	if err != nil {
		return nil, err
	}
	hc := httpClient(base, cfg.HTTPClient, cfg.AllowRedirect)
	cfg.Options = maps.Clone(cfg.Options)
	return &Model{cfg: cfg, base: base, client: api.NewClient(base, hc), windows: map[string]*window{}}, nil
}

// tracker returns the context tracker of model, reading the model's
// trained context length from /api/show (and the server's version from
// /api/version) on first use. A server without /api/show, or a reply
// without the length, leaves it unknown. A missing model, an unreachable
// server or a lookup that timed out is returned as the classified error,
// and asked again on the next call. The lookup is shared by the
// concurrent callers, each of which waits at most until its own ctx
// ends (internal/lookup), and runs under the first caller's deadline, at
// most 30 s.
func (m *Model) tracker(ctx context.Context, model string) (*window, error) {
	m.mu.Lock()
	w := m.windows[model]
	if w == nil {
		w = &window{tracker: ctxwindow.Tracker{Ceiling: m.cfg.NumCtx, Default: ctxwindow.DefaultMaxWindow, Floor: ctxwindow.OllamaDefaultWindow, Est: m.cfg.Estimator}}
		m.windows[model] = w
	}
	m.mu.Unlock()
	if _, err := w.shown.Get(ctx, func(ctx context.Context) (struct{}, error) { return struct{}{}, m.show(ctx, model, w) }); err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("ollama: chat with %s: context window lookup: %w", model, err)
		}
		return nil, err
	}
	return w, nil
}

// show reads model's trained context length and the server's version
// into w. Errors: a missing model, an unreachable server, a redirect to
// another origin, or ctx's end (the lookup's deadline, a
// *middleware.TimeoutError); anything else (an old server without /api/show, an
// odd reply) leaves the length unknown, and the window is learned from
// the replies.
func (m *Model) show(ctx context.Context, model string, w *window) error {
	limit := lookupTimeout(ctx)
	ex := &exchange{}
	sctx := middleware.WithReplyLimit(context.WithValue(ctx, exchangeKey{}, ex), middleware.SmallReplyLimit)
	resp, err := m.client.Show(sctx, &api.ShowRequest{Model: model})
	if err != nil {
		cerr := m.classify(ctx, model, ex, err)
		if ctx.Err() != nil {
			return &middleware.TimeoutError{Timeout: limit, Err: cerr}
		}
		if errors.Is(cerr, llm.ErrModelNotFound) || errors.Is(cerr, llm.ErrUnavailable) || errors.Is(cerr, llm.ErrRedirect) {
			return cerr
		}
		return nil
	}
	w.tracker.SetLength(contextLength(resp.ModelInfo))
	// A server that honours "truncate": false refuses a prompt over
	// its window: its replies were never cut. Unknown (an error, an
	// odd version) means it may cut, and counts are judged.
	vctx := middleware.WithReplyLimit(context.WithValue(ctx, exchangeKey{}, &exchange{}), middleware.SmallReplyLimit)
	if v, err := m.client.Version(vctx); err == nil {
		w.tracker.SetRefuses(honoursTruncate(v))
		w.whole = wholeCounts(v)
	} else if ctx.Err() != nil {
		return &middleware.TimeoutError{Timeout: limit, Err: fmt.Errorf("ollama: /api/version: %w", err)}
	}
	m.holdWindow(ctx, model, &w.tracker)
	return nil
}

// lookupTimeout is how long a lookup run under ctx has from now, rounded
// to the millisecond, for its [middleware.TimeoutError]; 0 when ctx has no
// deadline.
func lookupTimeout(ctx context.Context) time.Duration {
	d, ok := ctx.Deadline()
	if !ok {
		return 0
	}
	return time.Until(d).Round(time.Millisecond)
}

// holdWindow applies [Config].HoldNumCtx to tr: the window chosen at
// start, or the larger one /api/ps shows model loaded with. A failed
// /api/ps holds the chosen window alone: the first request then loads
// the model, at worst once more.
func (m *Model) holdWindow(ctx context.Context, model string, tr *ctxwindow.Tracker) {
	if m.cfg.HoldNumCtx == 0 {
		return
	}
	usable := tr.Window()
	hold := m.cfg.HoldNumCtx
	if hold < 0 || (usable > 0 && hold > usable) {
		hold = usable
	}
	ps, err := m.client.ListRunning(middleware.WithReplyLimit(ctx, middleware.SmallReplyLimit))
	if err == nil {
		for _, r := range ps.Models {
			if (sameModel(r.Name, model) || sameModel(r.Model, model)) && r.ContextLength > hold && (usable == 0 || r.ContextLength <= usable) {
				hold = r.ContextLength
			}
		}
	}
	tr.Hold(hold)
}

// sameModel reports whether Ollama model names a and b are the same
// model: "smollm2" is "smollm2:latest".
func sameModel(a, b string) bool {
	tag := func(s string) string {
		if strings.Contains(s, ":") {
			return s
		}
		return s + ":latest"
	}
	return tag(a) == tag(b)
}

// contextLength reads model_info["<arch>.context_length"] of /api/show
// (the arch from "general.architecture"); 0 when absent.
func contextLength(info map[string]any) int {
	arch, _ := info["general.architecture"].(string)
	if n, ok := info[arch+".context_length"].(float64); ok && n > 0 && n <= 1<<30 {
		return int(n)
	}
	return 0
}

// ContextWindow implements [llm.Windowed]: the window a request of the
// configured model may fill, prompt and reply together (see
// [Config].NumCtx), and the model's calibrated token estimator. The first
// call reads /api/show.
func (m *Model) ContextWindow(ctx context.Context) (int, *llm.TokenEstimator, error) {
	w, err := m.tracker(ctx, m.cfg.Model)
	if err != nil {
		return 0, nil, err
	}
	return w.tracker.Window(), w.tracker.Estimator(), nil
}

// Name returns the configured model name, e.g. "qwen3.5:9b".
func (m *Model) Name() string { return m.cfg.Model }

// URL returns the base URL of the Ollama server.
func (m *Model) URL() string { return m.base.String() }

// Generate sends req to /api/chat and returns the whole reply; a streamed
// reply is aggregated. Reasoning the server returns in its "thinking" field
// goes to [llm.Response.Thinking]. Tool calls get the server's IDs, or
// "call_0", "call_1", ... when it sends none.
//
// Errors (all match with errors.Is / errors.As):
//   - ctx ended: an error wrapping ctx.Err(); the request is aborted at once;
//   - server unreachable (connection refused, DNS, reset): [*llm.UnavailableError]
//     whose hint says to run `ollama serve`;
//   - model missing (HTTP 404 "model ... not found"): [*llm.ModelNotFoundError]
//     whose hint says to run `ollama pull MODEL`;
//   - any other HTTP error status: [llm.StatusError] with the server's
//     message and Retry-After;
//   - done_reason "length": [*llm.TruncatedError] holding the partial reply;
//   - no text (after trimming white space) and no tool calls: an error
//     wrapping [llm.ErrEmpty];
//   - an invalid request (nil, Format or tool JSON not valid) or a reply that
//     breaks the protocol: a plain error.
func (m *Model) Generate(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	start := time.Now()
	if req == nil {
		return nil, errors.New("ollama: nil Request")
	}
	creq, err := m.chatRequest(req)
	if err != nil {
		return nil, err
	}
	win, err := m.tracker(ctx, creq.Model)
	if err != nil {
		return nil, err
	}
	tr := &win.tracker
	plan, err := tr.Plan(Provider, creq.Model, req, 0)
	if err != nil {
		return nil, err // never sent: the server would cut its beginning
	}
	creq.Options["num_ctx"] = plan.Window
	if _, set := m.cfg.Options["num_predict"]; req.MaxTokens > 0 || !set {
		// Every request bounds its reply, to the reserve kept for it in
		// the window (req.MaxTokens, at most a quarter of the window): an
		// unbounded one can hold the server's slot for minutes.
		creq.Options["num_predict"] = plan.Reserve
	}

	ex := &exchange{}
	ctx = context.WithValue(ctx, exchangeKey{}, ex)
	// The reply may hold at most MaxTokens tokens, else the window's.
	ctx = middleware.WithReplyLimit(ctx, middleware.ChatReplyLimit(cmp.Or(req.MaxTokens, plan.Window)))
	var (
		agg  aggregate
		done bool
	)
	err = m.client.Chat(ctx, creq, func(cr api.ChatResponse) error {
		if done {
			return errors.New("ollama: protocol error: data after the final (done) object")
		}
		agg.add(cr)
		done = cr.Done
		return nil
	})
	if err == nil && !done {
		err = ex.incomplete()
	}
	if err != nil {
		err = m.classify(ctx, creq.Model, ex, err)
		if se, ok := errors.AsType[llm.StatusError](err); ok && refusalStatus(se.StatusCode) {
			if window, prompt, ok := llm.ParseContextRefusal(se.Message, ""); ok {
				tr.Refused(plan, window)
				if prompt == 0 {
					prompt = plan.Tokens
				}
				return nil, &llm.ContextLengthError{Provider: Provider, Model: creq.Model, Window: tr.Window(), Prompt: prompt, Message: se.Message}
			}
		}
		return nil, err
	}

	resp := agg.response(creq.Model)
	resp.Duration = time.Since(start)
	cut, kept := false, resp.PromptTokens
	switch tr.Observe(plan, ctxwindow.Count{Prompt: resp.PromptTokens, Whole: win.whole}) {
	case ctxwindow.Cut:
		cut = true
	case ctxwindow.Unsure:
		// A count a cut or a KV-cache hit could give: ask again with a
		// prompt no cache holds. A probe that fails leaves the reply as
		// it is: the window is never lowered on a guess.
		if n, err := m.probe(ctx, creq); err == nil {
			cut, kept = tr.Probed(plan, n), n
		}
	}
	if cut {
		return nil, &llm.ContextLengthError{Provider: Provider, Model: creq.Model, Window: tr.Window(), Prompt: plan.Tokens, Kept: kept, Response: resp}
	}
	switch {
	case resp.DoneReason == llm.DoneLength:
		return nil, &llm.TruncatedError{Response: resp}
	case strings.TrimSpace(resp.Text) == "" && len(resp.ToolCalls) == 0:
		return nil, fmt.Errorf("ollama: model %q: %w", resp.Model, llm.ErrEmpty)
	}
	return resp, nil
}

// probeSeq numbers probes, so that no two share a first token.
var probeSeq atomic.Uint64

// probe sends creq again with a first message that starts differently, so
// that no KV cache can serve any of its prompt, for one token of reply,
// and returns the prompt tokens the server counted: the whole prompt, or
// what it kept of it.
func (m *Model) probe(ctx context.Context, creq *api.ChatRequest) (int, error) {
	p := *creq
	p.Messages = slices.Clone(creq.Messages)
	if len(p.Messages) > 0 {
		p.Messages[0].Content = fmt.Sprintf("[%d] ", probeSeq.Add(1)) + p.Messages[0].Content
	}
	p.Format = nil
	stream := false
	p.Stream = &stream
	p.Options = maps.Clone(creq.Options)
	p.Options["num_predict"] = 1
	ex := &exchange{}
	count := 0
	err := m.client.Chat(context.WithValue(ctx, exchangeKey{}, ex), &p, func(cr api.ChatResponse) error {
		if cr.Done {
			count = cr.PromptEvalCount
		}
		return nil
	})
	if err != nil {
		return 0, m.classify(ctx, p.Model, ex, err)
	}
	if count <= 0 {
		return 0, errors.New("ollama: the probe's reply has no prompt_eval_count")
	}
	return count, nil
}

// chatRequest maps an llm.Request to Ollama's /api/chat body.
func (m *Model) chatRequest(req *llm.Request) (*api.ChatRequest, error) {
	model := req.Model
	if model == "" {
		model = m.cfg.Model
	}
	stream := m.cfg.Stream
	think := m.cfg.Think != nil && *m.cfg.Think
	noTruncate, noShift := false, false
	creq := &api.ChatRequest{
		Model:  model,
		Stream: &stream,
		Think:  &api.ThinkValue{Value: think},
		// A prompt over the window is an error (HTTP 400), never cut
		// silently; servers before this field still cut, and Generate
		// tells from prompt_eval_count.
		Truncate: &noTruncate,
		// A reply that reaches the end of the window stops there with
		// done_reason "length" (a TruncatedError): by default Ollama
		// discards half the context in the middle of the reply and goes
		// on, ending "stop" as if nothing happened.
		Shift: &noShift,
	}
	if m.cfg.KeepAlive != nil {
		creq.KeepAlive = &api.Duration{Duration: *m.cfg.KeepAlive}
	}
	if len(req.Format) > 0 {
		switch {
		case m.cfg.JSONMode:
			creq.Format = json.RawMessage(`"json"`)
		case !json.Valid(req.Format):
			return nil, errors.New("ollama: Request.Format is not valid JSON")
		default:
			creq.Format = req.Format
		}
	}

	opts := maps.Clone(m.cfg.Options)
	if opts == nil {
		opts = map[string]any{}
	}
	if req.Temperature != nil {
		opts["temperature"] = *req.Temperature
	}
	if req.Seed != nil {
		opts["seed"] = *req.Seed
	}
	if req.MaxTokens > 0 {
		opts["num_predict"] = req.MaxTokens
	}
	creq.Options = opts

	tools, err := toolDefs(req.Tools)
	if err != nil {
		return nil, err
	}
	creq.Tools = tools
	msgs, err := messages(req.Messages)
	if err != nil {
		return nil, err
	}
	creq.Messages = msgs
	return creq, nil
}

// toolDefs maps tool definitions. Ollama's tool schema type holds type,
// properties, required, items and $defs (and, per property, type,
// description, enum, items, anyOf and nested properties); other JSON Schema
// keywords are not carried by the official client.
func toolDefs(defs []llm.ToolDef) (api.Tools, error) {
	if len(defs) == 0 {
		return nil, nil
	}
	out := make(api.Tools, len(defs))
	for i, d := range defs {
		if d.Name == "" {
			return nil, fmt.Errorf("ollama: tool %d has no name", i)
		}
		params := api.ToolFunctionParameters{Type: "object", Properties: api.NewToolPropertiesMap()}
		if len(d.Parameters) > 0 && string(d.Parameters) != "null" {
			if err := json.Unmarshal(d.Parameters, &params); err != nil {
				return nil, fmt.Errorf("ollama: tool %q: parameters are not a JSON Schema object: %w", d.Name, err)
			}
			if params.Type == "" {
				params.Type = "object"
			}
			if params.Properties == nil {
				params.Properties = api.NewToolPropertiesMap()
			}
		}
		out[i] = api.Tool{
			Type:     "function",
			Function: api.ToolFunction{Name: d.Name, Description: d.Description, Parameters: params},
		}
	}
	return out, nil
}

// messages maps the conversation. Tool results go as role "tool" with
// tool_name; when a result names no tool, the name is taken from the
// assistant tool call with the same ID.
func messages(msgs []llm.Message) ([]api.Message, error) {
	names := map[string]string{} // tool call ID → tool name
	out := make([]api.Message, len(msgs))
	for i, msg := range msgs {
		am := api.Message{Role: string(msg.Role), Content: msg.Content}
		for j, tc := range msg.ToolCalls {
			args := api.NewToolCallFunctionArguments()
			if len(tc.Arguments) > 0 && string(tc.Arguments) != "null" {
				if err := json.Unmarshal(tc.Arguments, &args); err != nil {
					return nil, fmt.Errorf("ollama: message %d, tool call %d (%s): arguments are not a JSON object: %w", i, j, tc.Name, err)
				}
			}
			am.ToolCalls = append(am.ToolCalls, api.ToolCall{
				ID:       tc.ID,
				Function: api.ToolCallFunction{Index: j, Name: tc.Name, Arguments: args},
			})
			if tc.ID != "" {
				names[tc.ID] = tc.Name
			}
		}
		if msg.Role == llm.RoleTool {
			am.ToolCallID = msg.ToolCallID
			am.ToolName = msg.Name
			if am.ToolName == "" {
				am.ToolName = names[msg.ToolCallID]
			}
		}
		out[i] = am
	}
	return out, nil
}

// aggregate collects the objects of one reply (one object when not
// streaming, many NDJSON lines when streaming).
type aggregate struct {
	model      string
	text       strings.Builder
	thinking   strings.Builder
	calls      []llm.ToolCall
	doneReason string
	prompt     int
	output     int
}

func (a *aggregate) add(cr api.ChatResponse) {
	if cr.Model != "" {
		a.model = cr.Model
	}
	a.text.WriteString(cr.Message.Content)
	a.thinking.WriteString(cr.Message.Thinking)
	for _, tc := range cr.Message.ToolCalls {
		id := tc.ID
		if id == "" {
			id = fmt.Sprintf("call_%d", len(a.calls))
		}
		args, err := json.Marshal(tc.Function.Arguments)
		if err != nil || len(args) == 0 {
			args = []byte("{}")
		}
		a.calls = append(a.calls, llm.ToolCall{ID: id, Name: tc.Function.Name, Arguments: args})
	}
	if cr.Done {
		a.doneReason = cr.DoneReason
		a.prompt = cr.PromptEvalCount
		a.output = cr.EvalCount
	}
}

func (a *aggregate) response(requested string) *llm.Response {
	resp := &llm.Response{
		Model:        a.model,
		Text:         a.text.String(),
		Thinking:     a.thinking.String(),
		ToolCalls:    a.calls,
		DoneReason:   a.doneReason,
		PromptTokens: a.prompt,
		OutputTokens: a.output,
	}
	if resp.Model == "" {
		resp.Model = requested
	}
	switch {
	case resp.DoneReason == "" || (resp.DoneReason == llm.DoneStop && len(resp.ToolCalls) > 0):
		// Ollama reports "stop" after tool calls; normalise as documented
		// on llm.Response.DoneReason.
		resp.DoneReason = llm.DoneStop
		if len(resp.ToolCalls) > 0 {
			resp.DoneReason = llm.DoneToolCalls
		}
	}
	return resp
}

// Provider returns "ollama" ([middleware.Providerer]: the gen_ai.provider.name of
// middleware.Trace's spans).
func (m *Model) Provider() string { return "ollama" }
