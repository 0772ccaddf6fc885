package openai

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/existence-loop/sdk/internal/lookup"
	"github.com/existence-loop/sdk/internal/origin"
	"github.com/existence-loop/sdk/llm"
	"github.com/existence-loop/sdk/llm/ctxwindow"
	"github.com/existence-loop/sdk/llm/middleware"
)

// DefaultBaseURL is the API used when neither [Config.BaseURL] nor the
// OPENAI_BASE_URL environment variable is set.
const DefaultBaseURL = "https://api.openai.com/v1"

// DefaultSchemaName is the json_schema name sent when [Config.SchemaName] is
// empty.
const DefaultSchemaName = "response"

// Provider is the provider name this adapter puts in its errors
// ([llm.StatusError], [llm.UnavailableError], [llm.ModelNotFoundError]).
const Provider = "openai"

// Config configures a [Model]. Only Model is required.
type Config struct {
	// BaseURL is the API base URL, ending in /v1: for llama.cpp server,
	// vLLM or LM Studio something like "http://127.0.0.1:8080/v1". Empty
	// means $OPENAI_BASE_URL, else [DefaultBaseURL]. Requests go to
	// BaseURL + "/chat/completions".
	BaseURL string
	// APIKey is sent as "Authorization: Bearer KEY". Empty means
	// $OPENAI_API_KEY; when that is empty too, no Authorization header is
	// sent, which local servers accept.
	APIKey string
	// Model is the model name sent on the wire, e.g. "gpt-4o-mini" or, for
	// a local server, the name it was started with. Required.
	Model string
	// HTTPClient sends the requests. Nil means a client without a timeout:
	// timeouts come from the context (see middleware.WithTimeout).
	HTTPClient *http.Client
	// Strict sends "strict": true in the json_schema response format, which
	// makes OpenAI enforce the schema exactly. Strict mode accepts only a
	// subset of JSON Schema: every object needs "additionalProperties":
	// false and must list all of its properties in "required". The SDK's
	// default response schema (prompt package) does not meet that, so the
	// default is false; local servers generally ignore the flag.
	Strict bool
	// JSONObject sends response_format {"type": "json_object"} (JSON mode:
	// any JSON object) instead of json_schema, for servers without
	// structured outputs. The schema is then not sent; describe it in the
	// prompt.
	JSONObject bool
	// SchemaName is the json_schema "name" (a-z, A-Z, 0-9, _ and -, at most
	// 64 characters). Empty means [DefaultSchemaName].
	SchemaName string
	// Stream asks for a streamed (SSE) reply, which Generate aggregates;
	// usage is requested with stream_options.include_usage. Streaming and
	// non-streaming give the same [llm.Response].
	Stream bool
	// MaxCompletionTokens sends [llm.Request.MaxTokens] as
	// "max_completion_tokens" instead of "max_tokens". The default,
	// "max_tokens", is what llama.cpp server, vLLM, LM Studio and Ollama's
	// OpenAI endpoint understand, and OpenAI still accepts it for chat
	// models; OpenAI's reasoning models (o-series, gpt-5) require
	// max_completion_tokens.
	MaxCompletionTokens bool
	// ContextWindow is the server's context window in tokens, prompt and
	// reply together, when the operator knows it (vLLM's --max-model-len,
	// llama.cpp server's context per slot). 0 means unknown until the
	// server states it in an error. With a window known, a prompt that
	// cannot fit is refused with an [*llm.ContextLengthError] before it is
	// sent.
	ContextWindow int
	// Estimator is the token estimator to calibrate; nil means a new one
	// per model.
	Estimator *llm.TokenEstimator
	// Logger receives the one warning that the server is Ollama (see
	// [Model.ContextWindow]); nil means slog.Default().
	Logger *slog.Logger
	// AllowRedirect are the hosts (a name or address, optionally with
	// ":port") a redirect may lead to besides the base URL's own origin
	// (scheme, host and port). A redirect anywhere else is not followed:
	// the call fails with an error matching [llm.ErrRedirect] that names
	// both origins, and the other host receives nothing (the rule of
	// internal/origin, as for existence/minds).
	AllowRedirect []string
}

// Model is an [llm.Model] backed by an OpenAI-compatible chat completions
// endpoint (POST {BaseURL}/chat/completions), through the official
// github.com/openai/openai-go/v3 client with its own retries disabled (use
// [middleware.WithRetry]). It is safe for concurrent use.
type Model struct {
	endpoint
	cfg Config
	svc oai.ChatCompletionService

	detected    lookup.Once[struct{}] // detect's lookup
	detectFails atomic.Int64          // detect's lookups that failed on the network
	mu          sync.Mutex
	ollama      string                        // the Ollama version, when the server is Ollama (detect)
	trackers    map[string]*ctxwindow.Tracker // by model name
}

// URL returns the API base URL, e.g. "http://127.0.0.1:8080/v1"
// (middleware.Locator).
func (m *Model) URL() string { return m.base }

// tracker returns the context tracker of model. On Ollama its window is
// [Config].ContextWindow or Ollama's default, which its OpenAI-compatible
// endpoint cannot change.
func (m *Model) tracker(ctx context.Context, model string) *ctxwindow.Tracker {
	m.detect(ctx)
	m.mu.Lock()
	defer m.mu.Unlock()
	t := m.trackers[model]
	if t == nil {
		t = &ctxwindow.Tracker{Ceiling: m.cfg.ContextWindow, Est: m.cfg.Estimator}
		if m.ollama != "" {
			t.Floor = ctxwindow.OllamaDefaultWindow
			if t.Ceiling == 0 {
				t.Ceiling = ctxwindow.OllamaDefaultWindow
			}
		}
		if !m.detected.Done() {
			// The check has not answered yet (this caller's context
			// ended first, or it failed and will be made again): this
			// call plans with what is known, and the tracker kept is
			// made once the check has answered.
			return t
		}
		m.trackers[model] = t
	}
	return t
}

func (m *Model) logger() *slog.Logger {
	if m.cfg.Logger != nil {
		return m.cfg.Logger
	}
	return slog.Default()
}

// ContextWindow implements [llm.Windowed]: [Config].ContextWindow, or the
// window the server stated in an error, lowered to what it was seen to
// keep; 0 while unknown. The first call (of this or Generate) asks the
// server once whether it is Ollama (GET /api/version beside /v1): Ollama's
// OpenAI-compatible endpoint drops num_ctx, so its default window, 4096
// tokens ([ctxwindow.OllamaDefaultWindow]), is the window unless
// [Config].ContextWindow says otherwise, and the adapter logs one warning.
func (m *Model) ContextWindow(ctx context.Context) (int, *llm.TokenEstimator, error) {
	t := m.tracker(ctx, m.cfg.Model)
	return t.Window(), t.Estimator(), nil
}

var _ llm.Model = (*Model)(nil)

// New returns a Model for cfg, filling BaseURL and APIKey from the
// environment as documented on [Config]. It makes no network call.
//
// Errors: cfg.Model is empty, or the base URL is not an absolute http or
// https URL with a host (an empty port, as in "http://127.0.0.1:/v1", is
// refused rather than taken as port 80).
func New(cfg Config) (*Model, error) {
	if strings.TrimSpace(cfg.Model) == "" {
		return nil, errors.New("openai: Config.Model is required (for example \"gpt-4o-mini\")")
	}
	base, hc, opts, err := clientOptions(&cfg.BaseURL, &cfg.APIKey, cfg.HTTPClient, cfg.AllowRedirect)
	if err != nil {
		return nil, err
	}
	if cfg.SchemaName == "" {
		cfg.SchemaName = DefaultSchemaName
	}
	m := &Model{
		cfg:      cfg,
		endpoint: endpoint{base: base, path: "/chat/completions", hc: hc},
		svc:      oai.NewChatCompletionService(opts...),
		trackers: map[string]*ctxwindow.Tracker{},
	}
	m.detected.Timeout = detectTimeout
	return m, nil
}

// clientOptions resolves the base URL (*baseURL, else $OPENAI_BASE_URL,
// else [DefaultBaseURL]) and the API key (*apiKey, else $OPENAI_API_KEY),
// writing back what it resolved, checks the URL, and returns the base
// without a trailing "/" and the client options every service of the
// adapter uses: no retries of the client's own, errors caught by
// [catchErrors], and the client hc (a copy of the one given, nil: a new
// one) with every reply capped and no redirect to another origin than
// the base URL's, but to the hosts in allow (internal/origin).
func clientOptions(baseURL, apiKey *string, given *http.Client, allow []string) (string, *http.Client, []option.RequestOption, error) {
	if *baseURL == "" {
		*baseURL = os.Getenv("OPENAI_BASE_URL")
	}
	if *baseURL == "" {
		*baseURL = DefaultBaseURL
	}
	u, err := url.Parse(*baseURL)
	switch {
	case err != nil || (u.Scheme != "http" && u.Scheme != "https"):
		return "", nil, nil, fmt.Errorf("openai: base URL %q is not an http:// or https:// URL (want e.g. http://127.0.0.1:8080/v1)", *baseURL)
	case u.Hostname() == "":
		return "", nil, nil, fmt.Errorf("openai: base URL %q has no host (want e.g. http://127.0.0.1:8080/v1)", *baseURL)
	case strings.HasSuffix(u.Host, ":"):
		// "http://127.0.0.1:" would silently go to port 80.
		return "", nil, nil, fmt.Errorf("openai: base URL %q has an empty port after \":\" (give the port, e.g. :8080, or drop the colon)", *baseURL)
	}
	if *apiKey == "" {
		*apiKey = os.Getenv("OPENAI_API_KEY")
	}
	// Every reply is capped (middleware.LimitReplies); calls set their cap.
	hc := origin.New(u, allow).Client(given)
	hc.Transport = middleware.LimitReplies(hc.Transport, middleware.SmallReplyLimit)
	// The services are built directly (not with oai.NewClient), so that no
	// other OPENAI_* variable (organization, project, custom headers) is
	// picked up implicitly.
	opts := []option.RequestOption{
		option.WithBaseURL(*baseURL),
		option.WithHTTPClient(hc),
		option.WithMaxRetries(0),
		option.WithMiddleware(catchErrors),
	}
	if *apiKey != "" {
		opts = append(opts, option.WithAPIKey(*apiKey))
	}
	return strings.TrimSuffix(*baseURL, "/"), hc, opts, nil
}

// Name returns the configured model name.
func (m *Model) Name() string { return m.cfg.Model }

// BaseURL returns the API base URL requests go to.
func (m *Model) BaseURL() string { return m.base }

// Generate sends req to {BaseURL}/chat/completions and returns the whole
// reply; a streamed reply is aggregated.
//
// Mapping: [llm.Request.Format] becomes response_format json_schema (name
// [Config.SchemaName], the schema unchanged, strict per [Config.Strict]) or
// json_object ([Config.JSONObject], or a Format of "json"); Temperature,
// Seed and MaxTokens (see [Config.MaxCompletionTokens]) are sent when set;
// tools, assistant tool calls and tool results (role "tool", tool_call_id)
// keep their IDs. The reply's finish_reason is normalised to "stop",
// "length" or "tool_calls" ("function_call" becomes "tool_calls"); a
// "reasoning_content" (or "reasoning") field, as llama.cpp and vLLM send
// for reasoning models, goes to [llm.Response.Thinking]; a refusal with no
// content is returned as the text.
//
// Errors (all match with errors.Is / errors.As):
//   - ctx ended: an error wrapping ctx.Err(); the request is aborted at once;
//   - server unreachable (connection refused or reset, DNS, a stream cut
//     before its finish_reason): [*llm.UnavailableError] whose hint asks
//     whether the server is running at the base URL;
//   - unknown model (error code "model_not_found", or HTTP 404 whose
//     message mentions the model): [*llm.ModelNotFoundError];
//   - any other HTTP error status: [llm.StatusError] with the server's
//     message and Retry-After (or OpenAI's retry-after-ms);
//   - a prompt over the context window, refused before it was sent (the
//     window is known), refused by the server (OpenAI's
//     context_length_exceeded, vLLM's "maximum context length is N
//     tokens", llama.cpp's "exceeds the available context size"), or cut
//     silently (the server counted far fewer prompt tokens than were
//     sent): [*llm.ContextLengthError], with the server's limit when its
//     message gives one;
//   - finish_reason "length": [*llm.TruncatedError] holding the partial reply;
//   - no text (after trimming white space) and no tool calls: an error
//     wrapping [llm.ErrEmpty];
//   - an invalid request (nil, unknown role, Format or tool JSON not
//     valid) or a reply that breaks the protocol: a plain error.
func (m *Model) Generate(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	start := time.Now()
	if req == nil {
		return nil, errors.New("openai: nil Request")
	}
	params, err := m.params(req)
	if err != nil {
		return nil, err
	}
	tr := m.tracker(ctx, params.Model)
	plan, err := tr.Plan(Provider, params.Model, req, 0)
	if err != nil {
		return nil, err // never sent
	}
	// Every request bounds its reply, to the reserve kept for it in the
	// window (req.MaxTokens, at most a quarter of a known window): an unbounded
	// one can hold the server's slot for minutes.
	m.maxTokens(&params, plan.Reserve)
	var (
		resp  *llm.Response
		whole bool
	)
	// The reply may hold at most MaxTokens tokens, else the window's.
	ctx = withStatus(middleware.WithReplyLimit(ctx, middleware.ChatReplyLimit(cmp.Or(req.MaxTokens, plan.Window))))
	if m.cfg.Stream {
		resp, whole, err = m.stream(ctx, params)
	} else {
		resp, whole, err = m.complete(ctx, params)
	}
	if err != nil {
		err = m.classify(ctx, params.Model, err)
		if ce, ok := errors.AsType[*llm.ContextLengthError](err); ok {
			tr.Refused(plan, ce.Window)
			ce.Window = tr.Window()
			if ce.Prompt == 0 {
				ce.Prompt = plan.Tokens
			}
		}
		return nil, err
	}
	resp.Duration = time.Since(start)
	if resp.Model == "" {
		resp.Model = params.Model
	}
	cut, kept := false, resp.PromptTokens
	switch tr.Observe(plan, ctxwindow.Count{Prompt: resp.PromptTokens, Whole: whole}) {
	case ctxwindow.Cut:
		cut = true
	case ctxwindow.Unsure:
		// A count a cut or a KV-cache hit could give: ask again with a
		// prompt no cache holds. A probe that fails leaves the reply as
		// it is: the window is never lowered on a guess.
		if n, err := m.probe(ctx, req); err == nil {
			cut, kept = tr.Probed(plan, n), n
		}
	}
	if cut {
		// A server that cuts silently (Ollama's /v1): the reply answers a
		// prompt that lost its beginning.
		return nil, &llm.ContextLengthError{Provider: Provider, Model: params.Model, Window: tr.Window(), Prompt: plan.Tokens, Kept: kept, Response: resp}
	}
	switch {
	case resp.DoneReason == llm.DoneLength:
		return nil, &llm.TruncatedError{Response: resp}
	case strings.TrimSpace(resp.Text) == "" && len(resp.ToolCalls) == 0:
		return nil, fmt.Errorf("openai: model %q: %w", resp.Model, llm.ErrEmpty)
	}
	return resp, nil
}

// probeSeq numbers probes, so that no two share a first token.
var probeSeq atomic.Uint64

// probe sends req again, not streamed, with a first message that starts
// differently, so that no KV cache can serve any of its prompt, without a
// response format and for one token of reply, and returns the prompt
// tokens the server counted: the whole prompt, or what it kept of it.
func (m *Model) probe(ctx context.Context, req *llm.Request) (int, error) {
	p := *req
	p.Messages = slices.Clone(req.Messages)
	if len(p.Messages) > 0 {
		p.Messages[0].Content = fmt.Sprintf("[%d] ", probeSeq.Add(1)) + p.Messages[0].Content
	}
	p.Format, p.MaxTokens = nil, 1
	params, err := m.params(&p)
	if err != nil {
		return 0, err
	}
	ctx = withStatus(middleware.WithReplyLimit(ctx, middleware.ChatReplyLimit(1)))
	resp, _, err := m.complete(ctx, params)
	switch {
	case err != nil:
		return 0, m.classify(ctx, params.Model, err)
	case resp.PromptTokens <= 0:
		return 0, errors.New("openai: the probe's reply has no usage.prompt_tokens")
	}
	return resp.PromptTokens, nil
}

// complete makes a non-streamed call. whole reports that the reply's
// prompt count includes the tokens served from the KV cache (wholeCount).
func (m *Model) complete(ctx context.Context, params oai.ChatCompletionNewParams) (resp *llm.Response, whole bool, err error) {
	cc, err := m.svc.New(ctx, params)
	if err != nil {
		return nil, false, err
	}
	if cc == nil || !cc.JSON.Choices.Valid() { // a body of "null", an object of another shape
		return nil, false, errors.New("protocol error: the reply is not a chat completion object (no \"choices\")")
	}
	resp, err = fromCompletion(cc)
	return resp, cc.JSON.Usage.Valid() && wholeCount(cc.Usage), err
}

// stream makes a streamed call and aggregates the chunks.
func (m *Model) stream(ctx context.Context, params oai.ChatCompletionNewParams) (*llm.Response, bool, error) {
	s := m.svc.NewStreaming(ctx, params)
	defer s.Close()
	var acc accumulator
	for s.Next() {
		if err := acc.add(s.Current()); err != nil {
			return nil, false, err
		}
	}
	if err := s.Err(); err != nil {
		return nil, false, err
	}
	resp, err := acc.response()
	return resp, acc.whole, err
}

// Provider returns "openai" ([middleware.Providerer]: the gen_ai.provider.name of
// middleware.Trace's spans), as for any OpenAI-compatible server.
func (m *Model) Provider() string { return "openai" }
