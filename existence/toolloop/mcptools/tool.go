package mcptools

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/existence-loop/sdk/existence/toolloop"
	"github.com/existence-loop/sdk/internal/runes"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	validator "github.com/santhosh-tekuri/jsonschema/v5"
)

// maxDescription caps a tool's description, in bytes, as sent to the model.
const maxDescription = 2048

// invalidNameChars are the characters the model-facing tool-name rule
// (^[A-Za-z0-9_-]{1,64}$) does not allow.
var invalidNameChars = regexp.MustCompile(`[^A-Za-z0-9_-]`)

// modelName gives the name the model sees for a server's tool:
// "{server}__{tool}". A tool name with characters the tool-calling APIs
// refuse (such as "." or "/") has them replaced by "_" and gets a short
// hash of the original name appended, so that "a.b" and "a_b" stay
// distinct; a name too long for 64 characters is cut and hashed the same
// way.
func modelName(server, tool string) string {
	name := invalidNameChars.ReplaceAllString(tool, "_")
	full := server + Separator + name
	if name == tool && len(full) <= 64 {
		return full
	}
	sum := sha256.Sum256([]byte(tool))
	suffix := "_" + hex.EncodeToString(sum[:4])
	if len(full)+len(suffix) > 64 {
		full = full[:64-len(suffix)]
	}
	return full + suffix
}

// offer turns the listed tools into toolloop tools, applying the allow-list.
func (srv *server) offer(listed []*mcp.Tool) ([]*tool, error) {
	byName := map[string]*mcp.Tool{}
	for _, t := range listed {
		if t == nil || t.Name == "" {
			return nil, fmt.Errorf("MCP server %q: %w: a listed tool has no name", srv.cfg.Name, ErrMalformed)
		}
		if prev, dup := byName[t.Name]; dup {
			// Which of the two would a call run? Neither is offered.
			return nil, fmt.Errorf("MCP server %q: %w: it lists two tools named %q (%q and %q); fix the server, or leave it out",
				srv.cfg.Name, ErrDuplicateTool, t.Name, describe(prev), describe(t))
		}
		byName[t.Name] = t
	}
	allowed := srv.cfg.Allow
	if len(allowed) == 0 {
		for _, n := range slices.Sorted(maps.Keys(byName)) {
			if srv.taskOnly.has(n) && !srv.taskCalls() {
				// A plain call would fail every time (tasks.go), and the
				// server offers no Tasks extension (taskcall.go).
				srv.set.emit(Event{Kind: EventToolNotOffered, Server: srv.cfg.Name, Tool: n,
					Text: `its execution.taskSupport is "required": it can only be called as a task, which this client does only through the Tasks extension of a 2026-07-28 server over HTTP, and this server offers none`})
				continue
			}
			allowed = append(allowed, n)
		}
	}
	allowed = slices.Clone(allowed)
	slices.Sort(allowed)
	allowed = slices.Compact(allowed)
	var out []*tool
	for _, n := range allowed {
		t, ok := byName[n]
		if !ok {
			return nil, fmt.Errorf("%w: MCP server %q does not offer the allowed tool %q", ErrConfig, srv.cfg.Name, n)
		}
		asTask := srv.taskOnly.has(n)
		if asTask && !srv.taskCalls() {
			return nil, fmt.Errorf("%w: MCP server %q: the allowed tool %q can only be called as a task (execution.taskSupport \"required\"), which this client does only through the Tasks extension of a 2026-07-28 server over HTTP, and this server offers none", ErrConfig, srv.cfg.Name, n)
		}
		schema, err := inputSchema(t.InputSchema)
		if err != nil {
			return nil, fmt.Errorf("MCP server %q: tool %q: %w", srv.cfg.Name, n, err)
		}
		desc := t.Description
		if desc == "" {
			desc = t.Title
		}
		desc = runes.Strip(strings.ToValidUTF8(desc, "\uFFFD"))
		if len(desc) > maxDescription {
			desc = cutBytes(desc, maxDescription)
		}
		out = append(out, &tool{
			server: srv,
			remote: n,
			name:   modelName(srv.cfg.Name, n),
			desc:   fmt.Sprintf("[MCP server %s] %s", srv.cfg.Name, desc),
			schema: schema,
			asTask: asTask,
		})
	}
	return out, nil
}

// inputSchema checks a listed input schema: a JSON object schema that
// compiles. "$schema" is dropped (tool-calling APIs do not want it). Every
// string in it (descriptions, titles, enum and const values, defaults,
// examples, at any depth) loses the code points of the SDK's unsafe rule
// (runes.Strip), as all text from outside does before it reaches a model;
// a member name holding one (a property the model could not name without
// it) is an [ErrMalformed] error.
func inputSchema(s any) (json.RawMessage, error) {
	if s == nil {
		return json.RawMessage(`{"type":"object","properties":{}}`), nil
	}
	raw, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("%w: input schema: %v", ErrMalformed, err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return nil, fmt.Errorf("%w: input schema is not a JSON object", ErrMalformed)
	}
	if t, ok := m["type"]; ok && t != "object" {
		return nil, fmt.Errorf("%w: input schema type is %v, want object", ErrMalformed, t)
	}
	delete(m, "$schema")
	if err := cleanSchema(m, ""); err != nil {
		return nil, fmt.Errorf("%w: input schema: %v", ErrMalformed, err)
	}
	raw, err = json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("%w: input schema: %v", ErrMalformed, err)
	}
	c := validator.NewCompiler()
	c.Draft = validator.Draft2020
	if err := c.AddResource("mem://mcptools/schema.json", bytes.NewReader(raw)); err != nil {
		return nil, fmt.Errorf("%w: input schema: %v", ErrMalformed, err)
	}
	if _, err := c.Compile("mem://mcptools/schema.json"); err != nil {
		return nil, fmt.Errorf("%w: input schema: %v", ErrMalformed, err)
	}
	return raw, nil
}

// cleanSchema removes the unsafe rule's code points from every string of
// the decoded JSON value v, in place, and refuses a member name that holds
// one; at is v's JSON Pointer, for the error.
func cleanSchema(v any, at string) error {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			if runes.UnsafeAt(k) >= 0 {
				return fmt.Errorf("member name %q at %s holds a code point the unsafe-character rule refuses", k, pointer(at))
			}
			if s, ok := e.(string); ok {
				v[k] = runes.Strip(s)
				continue
			}
			if err := cleanSchema(e, at+"/"+k); err != nil {
				return err
			}
		}
	case []any:
		for i, e := range v {
			if s, ok := e.(string); ok {
				v[i] = runes.Strip(s)
				continue
			}
			if err := cleanSchema(e, at+"/"+strconv.Itoa(i)); err != nil {
				return err
			}
		}
	}
	return nil
}

// pointer shows a JSON Pointer, "" being the root "/".
func pointer(at string) string {
	if at == "" {
		return "/"
	}
	return at
}

// tool is one allowed tool of one server, as a toolloop.Tool.
type tool struct {
	server *server
	remote string // the server's own name for it
	name   string // the name the model sees
	desc   string
	schema json.RawMessage
	asTask bool // called through the Tasks extension (taskcall.go)
}

var _ toolloop.Tool = (*tool)(nil)

func (t *tool) Name() string            { return t.name }
func (t *tool) Description() string     { return t.desc }
func (t *tool) Schema() json.RawMessage { return slices.Clone(t.schema) }

// Call calls the tool on its server; see [Set.Tools].
func (t *tool) Call(ctx context.Context, args json.RawMessage) (string, error) {
	start := time.Now()
	if a, ok := toolloop.Caller(ctx); ok {
		defer t.server.calling(a.AgentID)()
	}
	out, err := t.call(ctx, args)
	if err != nil {
		t.server.set.emit(Event{Kind: EventCallFailed, Server: t.server.cfg.Name, Tool: t.remote,
			Err: err, Duration: time.Since(start)})
	}
	return out, err
}

func (t *tool) call(ctx context.Context, args json.RawMessage) (string, error) {
	timeout := time.Duration(t.server.cfg.Timeout)
	ctx, cancel := context.WithTimeoutCause(ctx, timeout, errTimeout)
	defer cancel()
	if len(bytes.TrimSpace(args)) == 0 || string(bytes.TrimSpace(args)) == "null" {
		args = json.RawMessage(`{}`)
	}
	sess, err := t.server.session(ctx)
	if err != nil {
		return "", t.fail(ctx, err)
	}
	var res *mcp.CallToolResult
	if t.asTask {
		res, err = t.server.callTask(ctx, t.remote, args)
	} else {
		res, err = sess.CallTool(ctx, &mcp.CallToolParams{Name: t.remote, Arguments: args})
	}
	if err != nil {
		if ctx.Err() == nil && connectionLost(err) {
			// Not an answer from the server: the process or the connection
			// is gone. Drop the session; the next call restarts it after
			// the backoff.
			t.server.lost(sess, err)
			err = fmt.Errorf("the connection to the server was lost during the call (it may have crashed): %w", err)
		}
		return "", t.fail(ctx, err)
	}
	text, err := render(res, t.server.cfg.NonText)
	if err != nil {
		return "", fmt.Errorf("MCP server %q: tool %q: %w", t.server.cfg.Name, t.remote, err)
	}
	if len(text) > t.server.cfg.MaxResultBytes {
		return "", fmt.Errorf("MCP server %q: tool %q: %w: %d bytes, the limit is %d",
			t.server.cfg.Name, t.remote, ErrTooLarge, len(text), t.server.cfg.MaxResultBytes)
	}
	t.server.succeeded()
	return text, nil
}

// connectionLost reports whether a call's error means the server process
// or the connection is gone, rather than an answer the client could not
// use: the connection closed (a stdio server exited), or an HTTP request
// failed (the server is down, or restarted and forgot the session).
func connectionLost(err error) bool {
	var netErr net.Error
	var urlErr *url.Error
	return errors.Is(err, mcp.ErrConnectionClosed) || errors.Is(err, io.EOF) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, mcp.ErrSessionMissing) ||
		errors.As(err, &netErr) || errors.As(err, &urlErr)
}

// errTimeout is the cause of a call's ctx when the per-tool timeout passes.
var errTimeout = errors.New("tool call timed out")

// fail words a transport or protocol failure for the model.
func (t *tool) fail(ctx context.Context, err error) error {
	if errors.Is(context.Cause(ctx), errTimeout) {
		return fmt.Errorf("MCP server %q: tool %q: timed out after %s: %w",
			t.server.cfg.Name, t.remote, time.Duration(t.server.cfg.Timeout), context.DeadlineExceeded)
	}
	var down *DownError
	if errors.As(err, &down) || errors.Is(err, ErrClosed) {
		return err
	}
	return fmt.Errorf("MCP server %q: tool %q: %w", t.server.cfg.Name, t.remote, err)
}

// render turns a tool result into the text the model sees. A tool error
// (isError) is returned as an error wrapping [ErrToolError].
func render(res *mcp.CallToolResult, nonText bool) (string, error) {
	if res == nil {
		return "", fmt.Errorf("%w: no result", ErrMalformed)
	}
	var parts []string
	for i, c := range res.Content {
		switch c := c.(type) {
		case *mcp.TextContent:
			parts = append(parts, c.Text)
		case *mcp.ImageContent:
			parts = append(parts, binary("image", c.MIMEType, c.Data, nonText))
		case *mcp.AudioContent:
			parts = append(parts, binary("audio", c.MIMEType, c.Data, nonText))
		case *mcp.ResourceLink:
			s := "[resource link: " + c.URI
			if c.Name != "" {
				s += " (" + c.Name + ")"
			}
			parts = append(parts, s+"]")
		case *mcp.EmbeddedResource:
			r := c.Resource
			switch {
			case r == nil:
				return "", fmt.Errorf("%w: content %d: embedded resource with no contents", ErrMalformed, i)
			case r.Blob == nil:
				parts = append(parts, r.Text)
			default:
				parts = append(parts, binary("resource "+r.URI, r.MIMEType, r.Blob, nonText))
			}
		case nil:
			return "", fmt.Errorf("%w: content %d is null", ErrMalformed, i)
		default:
			return "", fmt.Errorf("%w: content %d: unsupported type %T", ErrMalformed, i, c)
		}
	}
	if len(parts) == 0 && res.StructuredContent != nil {
		b, err := json.Marshal(res.StructuredContent)
		if err != nil {
			return "", fmt.Errorf("%w: structured content: %v", ErrMalformed, err)
		}
		parts = append(parts, string(b))
	}
	// The unsafe rule applies where the text enters, as to every text
	// from outside (the executor cleans tool results again).
	text := runes.Strip(strings.ToValidUTF8(strings.Join(parts, "\n"), "\uFFFD"))
	if res.IsError {
		if strings.TrimSpace(text) == "" {
			text = "(the server gave no message)"
		}
		return "", fmt.Errorf("%w: %s", ErrToolError, text)
	}
	return text, nil
}

// binary renders non-text content: a data: URL when opted in, else a note.
func binary(what, mime string, data []byte, nonText bool) string {
	if mime == "" {
		mime = "application/octet-stream"
	}
	if !nonText {
		return fmt.Sprintf("[%s content (%s, %d bytes) left out: this agent takes text results only]", what, mime, len(data))
	}
	return fmt.Sprintf("[%s content: data:%s;base64,%s]", what, mime, base64.StdEncoding.EncodeToString(data))
}

// cutBytes cuts s to at most n bytes without splitting a character.
func cutBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[:n]
	for len(s) > 0 && !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s
}

// describe is a tool's description for an error message, cut short.
func describe(t *mcp.Tool) string {
	d := t.Description
	if d == "" {
		d = t.Title
	}
	d = strings.ToValidUTF8(d, "\uFFFD")
	if len(d) > 60 {
		d = cutBytes(d, 60) + "…"
	}
	return d
}
