// Package a2atools offers remote A2A agents (Agent2Agent protocol v1.0) to
// a toolloop.Executor as tools: an existence agent can hand a task to an
// agent of any framework that speaks A2A and use its answer.
//
// [Connect] fetches the remote agent's card once (bounded in time and
// bytes, no redirect to another origin, the minds' address rules:
// minds.NewClient) and [Agent.Tool] is one tool, named after the agent,
// whose description is the card's description and skills. A call sends
// the model's message to the agent (github.com/a2aproject/a2a-go/v2's
// client, JSON-RPC or HTTP+JSON as the card offers) and waits, at most
// [Config].Timeout, for the task to end, polling it every
// [Config].PollInterval; the tool's result is the agent's answer: the
// final status message and the text of the artifacts, cut to
// [Config].MaxResultChars characters. Each HTTP response is read up to
// [Config].MaxResponseBytes.
//
//	agent, err := a2atools.Connect(ctx, a2atools.Config{URL: "https://agents.example/.well-known/agent-card.json", Token: tok})
//	...
//	exec, err := toolloop.New(toolloop.Config{Tools: append(ws.Tools(), agent.Tool())})
package a2atools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"

	"github.com/existence-loop/sdk/existence/minds"
	"github.com/existence-loop/sdk/existence/toolloop"
	"github.com/existence-loop/sdk/prompt"
)

// Defaults of [Config].
const (
	// DefaultCardTimeout bounds fetching the card: 30 s.
	DefaultCardTimeout = 30 * time.Second
	// DefaultMaxCardBytes bounds the card: 256 KiB.
	DefaultMaxCardBytes = 256 << 10
	// DefaultTimeout bounds one call, from sending the message to the
	// task's end: 5 minutes.
	DefaultTimeout = 5 * time.Minute
	// DefaultPollInterval is how often a call reads a task that has not
	// ended: 1 s.
	DefaultPollInterval = time.Second
	// DefaultMaxResponseBytes bounds each HTTP response of a call: 1 MiB.
	DefaultMaxResponseBytes = 1 << 20
	// DefaultMaxResultChars bounds the tool's result: 8,000 characters.
	DefaultMaxResultChars = 8000
	// MaxMessageChars bounds the message the model sends: 2,000
	// characters (task.DefaultMaxDescription, what an existence agent
	// accepts).
	MaxMessageChars = 2000
)

// Errors of [Connect] and of the tool's calls. Match them with errors.Is.
var (
	// ErrCard: the card could not be fetched or read (status, size,
	// JSON, no usable interface).
	ErrCard = errors.New("a2atools: agent card")
	// ErrTooLarge: a response was larger than its cap.
	ErrTooLarge = errors.New("a2atools: response too large")
	// ErrTask: the remote task failed, was canceled or rejected, or asks
	// for input or authentication the tool cannot give.
	ErrTask = errors.New("a2atools: remote task did not complete")
)

// Config configures [Connect].
type Config struct {
	// URL is the agent card's URL, or the agent's base URL, to which
	// "/.well-known/agent-card.json" is added (required; http or https).
	URL string
	// Name is the tool's name (letters, digits, "_" and "-", at most 64);
	// default "a2a_" and the card's name in lower case.
	Name string
	// Token, when set, is sent as "Authorization: Bearer TOKEN" with every
	// request; Header adds further headers.
	Token  string
	Header http.Header
	// AllowPrivate lets the tool reach private and loopback addresses the
	// URL does not itself name; AllowRedirect lists hosts redirects may go
	// to beyond the URL's origin (see minds.NewClient).
	AllowPrivate  bool
	AllowRedirect []string
	// CardTimeout and MaxCardBytes bound fetching the card; defaults
	// [DefaultCardTimeout], [DefaultMaxCardBytes].
	CardTimeout  time.Duration
	MaxCardBytes int64
	// Timeout bounds one call; default [DefaultTimeout]. PollInterval is
	// how often a call reads its task; default [DefaultPollInterval].
	Timeout      time.Duration
	PollInterval time.Duration
	// MaxResponseBytes bounds each HTTP response of a call; default
	// [DefaultMaxResponseBytes]. MaxResultChars bounds the tool's result
	// in characters; default [DefaultMaxResultChars].
	MaxResponseBytes int64
	MaxResultChars   int
	// Client, when set, replaces the client minds.NewClient builds (tests,
	// a proxy); the caps still apply.
	Client *http.Client
}

func (c Config) withDefaults() Config {
	if c.CardTimeout <= 0 {
		c.CardTimeout = DefaultCardTimeout
	}
	if c.MaxCardBytes <= 0 {
		c.MaxCardBytes = DefaultMaxCardBytes
	}
	if c.Timeout <= 0 {
		c.Timeout = DefaultTimeout
	}
	if c.PollInterval <= 0 {
		c.PollInterval = DefaultPollInterval
	}
	if c.MaxResponseBytes <= 0 {
		c.MaxResponseBytes = DefaultMaxResponseBytes
	}
	if c.MaxResultChars <= 0 {
		c.MaxResultChars = DefaultMaxResultChars
	}
	return c
}

// Agent is a remote A2A agent whose card was fetched.
type Agent struct {
	cfg    Config
	card   *a2a.AgentCard
	client *a2aclient.Client
	name   string
}

// validName is the tool-name rule of the tool-calling APIs.
var validName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

var nameChars = regexp.MustCompile(`[^a-z0-9_-]+`)

// cardURL returns the card's URL for cfg.URL.
func cardURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%w: URL %q is not an http or https URL", ErrCard, raw)
	}
	if !strings.HasSuffix(u.Path, ".json") {
		u = u.JoinPath(".well-known", "agent-card.json")
	}
	return u, nil
}

// Connect fetches the card at cfg.URL and returns the agent. Errors:
// [ErrCard] (wrapping the cause), [ErrTooLarge], minds.ErrRedirect,
// minds.ErrAddress, ctx's.
func Connect(ctx context.Context, cfg Config) (*Agent, error) {
	cfg = cfg.withDefaults()
	u, err := cardURL(cfg.URL)
	if err != nil {
		return nil, err
	}
	base := cfg.Client
	if base == nil {
		base = minds.NewClient(u, cfg.AllowRedirect, cfg.AllowPrivate, cfg.Timeout)
	}
	card, err := fetchCard(ctx, cfg, u, base)
	if err != nil {
		return nil, err
	}
	name := cfg.Name
	if name == "" {
		name = "a2a_" + strings.Trim(nameChars.ReplaceAllString(strings.ToLower(card.Name), "_"), "_")
		if len(name) > 64 {
			name = name[:64]
		}
	}
	if !validName.MatchString(name) {
		return nil, fmt.Errorf("a2atools: tool name %q: use 1–64 letters, digits, \"_\" and \"-\"", name)
	}
	hc := &http.Client{Transport: &capped{base: transportOf(base), header: headers(cfg), max: cfg.MaxResponseBytes},
		CheckRedirect: base.CheckRedirect, Timeout: cfg.Timeout}
	client, err := a2aclient.NewFromCard(ctx, card, a2aclient.WithJSONRPCTransport(hc), a2aclient.WithRESTTransport(hc))
	if err != nil {
		return nil, fmt.Errorf("%w: %s offers no interface this client speaks (JSON-RPC or HTTP+JSON, A2A 1.0): %w", ErrCard, u.Redacted(), err)
	}
	return &Agent{cfg: cfg, card: card, client: client, name: name}, nil
}

func transportOf(c *http.Client) http.RoundTripper {
	if c.Transport != nil {
		return c.Transport
	}
	return http.DefaultTransport
}

func headers(cfg Config) http.Header {
	h := cfg.Header.Clone()
	if h == nil {
		h = http.Header{}
	}
	if cfg.Token != "" {
		h.Set("Authorization", "Bearer "+cfg.Token)
	}
	return h
}

// fetchCard GETs the card, bounded by CardTimeout and MaxCardBytes.
func fetchCard(ctx context.Context, cfg Config, u *url.URL, c *http.Client) (*a2a.AgentCard, error) {
	ctx, cancel := context.WithTimeout(ctx, cfg.CardTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCard, err)
	}
	for k, vs := range headers(cfg) {
		req.Header[k] = vs
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%w: GET %s: %w", ErrCard, u.Redacted(), err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%w: GET %s: %s", ErrCard, u.Redacted(), resp.Status)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, cfg.MaxCardBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%w: GET %s: %w", ErrCard, u.Redacted(), err)
	}
	if int64(len(b)) > cfg.MaxCardBytes {
		return nil, fmt.Errorf("%w: %w: the card at %s is larger than %d bytes", ErrCard, ErrTooLarge, u.Redacted(), cfg.MaxCardBytes)
	}
	var card a2a.AgentCard
	if err := json.Unmarshal(b, &card); err != nil {
		return nil, fmt.Errorf("%w: %s is not an agent card: %w", ErrCard, u.Redacted(), err)
	}
	if strings.TrimSpace(card.Name) == "" || len(card.SupportedInterfaces) == 0 {
		return nil, fmt.Errorf("%w: the card at %s has no name or no supportedInterfaces", ErrCard, u.Redacted())
	}
	return &card, nil
}

// Card returns the agent's card as fetched.
func (a *Agent) Card() *a2a.AgentCard { return a.card }

// Tool returns the tool that gives the agent a task.
func (a *Agent) Tool() toolloop.Tool {
	return toolloop.NewTool(a.name, a.description(), a.call)
}

// Close releases the client.
func (a *Agent) Close() error { return a.client.Destroy() }

// description is the card's description and skills, cleaned, at most
// 2,048 bytes.
func (a *Agent) description() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Give a task to %s, a remote agent (A2A), and get its answer. %s", a.card.Name, a.card.Description)
	if len(a.card.Skills) > 0 {
		b.WriteString(" Its skills:")
		for _, s := range a.card.Skills {
			fmt.Fprintf(&b, " %s: %s;", s.Name, s.Description)
		}
	}
	b.WriteString(" Write the task as a self-contained message.")
	return cut(prompt.Clean(b.String()), 2048)
}

type callArgs struct {
	Message string `json:"message" jsonschema:"description=the task for the remote agent as a self-contained message (at most 2000 characters)"`
}

// call sends the message and waits for the task's end.
func (a *Agent) call(ctx context.Context, in callArgs) (string, error) {
	text := strings.TrimSpace(in.Message)
	if text == "" {
		return "", &toolloop.ArgumentError{Problems: []string{"/message: empty"}}
	}
	if n := utf8.RuneCountInString(text); n > MaxMessageChars {
		return "", &toolloop.ArgumentError{Problems: []string{fmt.Sprintf("/message: %d characters, the limit is %d", n, MaxMessageChars)}}
	}
	ctx, cancel := context.WithTimeout(ctx, a.cfg.Timeout)
	defer cancel()
	res, err := a.client.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(text)),
		Config: &a2a.SendMessageConfig{AcceptedOutputModes: []string{"text/plain", "application/json"}}})
	if err != nil {
		return "", fmt.Errorf("%s: sending the message: %w", a.card.Name, err)
	}
	var t *a2a.Task
	switch r := res.(type) {
	case *a2a.Message:
		return a.result(partsText(r.Parts)), nil
	case *a2a.Task:
		t = r
	default:
		return "", fmt.Errorf("%s: unexpected answer %T", a.card.Name, res)
	}
	tick := time.NewTicker(a.cfg.PollInterval)
	defer tick.Stop()
	for !t.Status.State.Terminal() && t.Status.State != a2a.TaskStateInputRequired && t.Status.State != a2a.TaskStateAuthRequired {
		select {
		case <-ctx.Done():
			return "", fmt.Errorf("%s: task %s still %s after %s: %w", a.card.Name, t.ID, t.Status.State, a.cfg.Timeout, ctx.Err())
		case <-tick.C:
		}
		t, err = a.client.GetTask(ctx, &a2a.GetTaskRequest{ID: t.ID})
		if err != nil {
			return "", fmt.Errorf("%s: reading the task: %w", a.card.Name, err)
		}
	}
	answer := taskText(t)
	if t.Status.State != a2a.TaskStateCompleted {
		return "", fmt.Errorf("%w: %s: task %s ended %s: %s", ErrTask, a.card.Name, t.ID, t.Status.State, cut(answer, 500))
	}
	return a.result(answer), nil
}

func (a *Agent) result(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		s = "(the agent completed the task without an answer)"
	}
	if utf8.RuneCountInString(s) > a.cfg.MaxResultChars {
		r := []rune(s)
		s = string(r[:a.cfg.MaxResultChars]) + "… [cut]"
	}
	return s
}

// taskText is a task's final status message and its artifacts' text.
func taskText(t *a2a.Task) string {
	var b strings.Builder
	if t.Status.Message != nil {
		b.WriteString(partsText(t.Status.Message.Parts))
	}
	for _, art := range t.Artifacts {
		if art == nil {
			continue
		}
		txt := partsText(art.Parts)
		if txt == "" || strings.Contains(b.String(), txt) {
			continue
		}
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		if art.Name != "" {
			b.WriteString("[" + art.Name + "] ")
		}
		b.WriteString(txt)
	}
	return b.String()
}

// partsText is the text of parts: text parts as they are, data parts as
// JSON, a file by its URL.
func partsText(parts a2a.ContentParts) string {
	var out []string
	for _, p := range parts {
		if p == nil {
			continue
		}
		switch c := p.Content.(type) {
		case a2a.Text:
			out = append(out, string(c))
		case a2a.Data:
			if b, err := json.Marshal(c.Value); err == nil {
				out = append(out, string(b))
			}
		case a2a.URL:
			out = append(out, "(file "+string(c)+")")
		}
	}
	return strings.Join(out, "\n")
}

func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// capped adds the headers to every request and fails a response body
// longer than max with ErrTooLarge.
type capped struct {
	base   http.RoundTripper
	header http.Header
	max    int64
}

func (c *capped) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, vs := range c.header {
		r.Header[k] = vs
	}
	resp, err := c.base.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	resp.Body = &limitedBody{rc: resp.Body, left: c.max}
	return resp, nil
}

type limitedBody struct {
	rc   io.ReadCloser
	left int64
}

func (l *limitedBody) Read(p []byte) (int, error) {
	if l.left <= 0 {
		var one [1]byte
		if n, err := l.rc.Read(one[:]); n == 0 && err != nil {
			return 0, err // the body ended at the cap
		}
		return 0, fmt.Errorf("%w: more than the cap of bytes (Config.MaxResponseBytes)", ErrTooLarge)
	}
	if int64(len(p)) > l.left {
		p = p[:l.left]
	}
	n, err := l.rc.Read(p)
	l.left -= int64(n)
	return n, err
}

func (l *limitedBody) Close() error { return l.rc.Close() }
