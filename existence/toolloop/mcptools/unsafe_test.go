package mcptools_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/existence"
	"github.com/existence-loop/sdk/existence/toolloop"
	"github.com/existence-loop/sdk/existence/toolloop/mcptools"
	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/internal/runes"
	"github.com/existence-loop/sdk/llm"
	"github.com/existence-loop/sdk/llm/llmtest"
)

// hidden holds one of each kind of code point the unsafe rule refuses:
// a bidirectional override and its pop, tag characters spelling "IGNORE",
// zero-width characters, a byte order mark, a soft hyphen, C0 and C1
// controls, and a run of variation selectors.
var hidden = []string{
	"\u202E", "\u202C", "\U000E0049\U000E0047\U000E004E\U000E004F\U000E0052\U000E0045",
	"\u200B", "\u200D", "\u2060", "\uFEFF", "\u00AD", "\u2066", "\u061C",
	"\x1b[31m", "\r", "\u0085", "\uFE00\uFE0F", "\U000E0100",
}

// laced returns s with every hidden code point put in it.
func laced(s string) string { return s + strings.Join(hidden, "x") + s }

// hostileServer is a real MCP server whose every text carries hidden code
// points: a tool's name, title, description and input schema (property
// descriptions and titles at any depth, enum values, a default), its
// results, and a resource.
func hostileServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "hostile", Version: "1"}, nil)
	schema := map[string]any{
		"type":        "object",
		"title":       laced("Args"),
		"description": laced("The arguments."),
		"properties": map[string]any{
			"mode": map[string]any{"type": "string", "enum": []any{laced("fast"), "slow"}, "description": laced("How.")},
			"deep": map[string]any{"type": "object", "title": laced("Deep"), "properties": map[string]any{
				"leaf": map[string]any{"type": "string", "description": laced("A leaf."), "default": laced("d"),
					"examples": []any{laced("e")}},
			}},
			"list": map[string]any{"type": "array", "items": map[string]any{"type": "string", "description": laced("An item.")}},
		},
	}
	s.AddTool(&mcp.Tool{Name: "look" + hidden[0] + "up", Title: laced("Look"), Description: laced("Look things up."), InputSchema: schema},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: laced("found")},
				&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "test://r", Text: laced("embedded")}}}}, nil
		})
	s.AddTool(&mcp.Tool{Name: "broken", Description: laced("Fails."), InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: laced("it broke")}}}, nil
		})
	s.AddResource(&mcp.Resource{URI: "test://doc", Name: "doc", MIMEType: "text/plain"},
		func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: "test://doc", Text: laced("doc")}}}, nil
		})
	return s
}

// unsafeIn returns, for every string and member name in the JSON value v,
// the unsafe code points it holds (and its invalid UTF-8), as "path: U+XXXX".
func unsafeIn(v any, at string, out *[]string) {
	check := func(s, where string) {
		if !utf8.ValidString(s) {
			*out = append(*out, where+": invalid UTF-8")
		}
		for i := runes.UnsafeAt(s); i >= 0; {
			r, n := utf8.DecodeRuneInString(s[i:])
			*out = append(*out, fmt.Sprintf("%s: U+%04X", where, r))
			s = s[i+n:]
			i = runes.UnsafeAt(s)
		}
	}
	switch v := v.(type) {
	case string:
		check(v, at)
	case map[string]any:
		for k, e := range v {
			check(k, at+"/"+k+" (name)")
			unsafeIn(e, at+"/"+k, out)
		}
	case []any:
		for i, e := range v {
			unsafeIn(e, fmt.Sprintf("%s/%d", at, i), out)
		}
	}
}

// scan returns the unsafe code points anywhere in req: messages, tool
// names, descriptions and schemas (decoded, so that an escape counts).
func scan(t *testing.T, req *llm.Request) []string {
	t.Helper()
	raw, err := json.Marshal(req)
	require.NoError(t, err)
	var v any
	require.NoError(t, json.Unmarshal(raw, &v))
	var out []string
	unsafeIn(v, "", &out)
	return out
}

// TestNoUnsafeCodePointReachesTheModel feeds every kind of hidden code
// point through a real MCP server — in a tool's name, title, description,
// input schema (nested descriptions and titles, enum values, defaults,
// examples), results, error results and a resource — and scans each
// request the model receives: none is left, and the words around them are.
func TestNoUnsafeCodePointReachesTheModel(t *testing.T) {
	set := connect(t, mcptools.Config{Servers: []mcptools.ServerConfig{{Name: "h", Transport: inMemory(t, hostileServer, nil)}}})
	tools := set.Tools()
	require.Len(t, tools, 2)
	var lookup string
	for _, tl := range tools {
		if strings.HasPrefix(tl.Name(), "h__look") {
			lookup = tl.Name()
		}
	}
	require.NotEmpty(t, lookup)

	model := llmtest.NewFake(
		llmtest.Reply{ToolCalls: []llm.ToolCall{{Name: lookup, Arguments: json.RawMessage(`{"mode":"slow"}`)}}},
		llmtest.Reply{ToolCalls: []llm.ToolCall{{Name: "h__broken", Arguments: json.RawMessage(`{}`)}}},
		llmtest.Reply{Text: "done"},
	)
	exec, err := toolloop.New(toolloop.Config{Model: model, Tools: tools})
	require.NoError(t, err)
	out, err := exec.Execute(t.Context(), existence.Assignment{Goal: identity.Goal{Objective: "look it up"}})
	require.NoError(t, err)
	assert.Equal(t, identity.Done, out.Status, out.Summary)

	reqs := model.Requests()
	require.Len(t, reqs, 3)
	for i, req := range reqs {
		assert.Empty(t, scan(t, req), "request %d", i)
	}
	last := reqs[2]
	blob, err := json.Marshal(last)
	require.NoError(t, err)
	for _, word := range []string{"Look things up.", "The arguments.", "How.", "A leaf.", "An item.", "fast", "found", "embedded", "it broke"} {
		assert.Contains(t, string(blob), word, "the text around the hidden code points is kept")
	}

	// Resource contents, which a mind posts in a slot.
	text, err := set.ReadResource(t.Context(), "h", "test://doc")
	require.NoError(t, err)
	assert.Equal(t, -1, runes.UnsafeAt(text), "resource text %q", text)
	assert.True(t, strings.HasPrefix(text, "docxxxx") && strings.HasSuffix(text, "xdoc"), "resource text %q", text)
}

// TestUnsafeMemberNameRefused: a schema property whose name holds an
// unsafe code point cannot be cleaned (the model would send a name the
// server does not know), so the server's tool is refused with a clear
// error.
func TestUnsafeMemberNameRefused(t *testing.T) {
	srv := func() *mcp.Server {
		s := mcp.NewServer(&mcp.Implementation{Name: "hostile", Version: "1"}, nil)
		s.AddTool(&mcp.Tool{Name: "x", InputSchema: map[string]any{"type": "object", "properties": map[string]any{
			"pa\u202Eth": map[string]any{"type": "string"}}}},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{}, nil
			})
		return s
	}
	_, err := mcptools.Connect(t.Context(), mcptools.Config{Logger: quiet,
		Servers: []mcptools.ServerConfig{{Name: "h", Transport: inMemory(t, srv, nil)}}})
	require.ErrorIs(t, err, mcptools.ErrMalformed)
	assert.Contains(t, err.Error(), `member name "pa\u202eth" at /properties holds a code point the unsafe-character rule refuses`)
}

// TestElicitationMessageCleaned: a server's question reaches the
// ElicitFunc (a person, the requests queue) without unsafe code points.
func TestElicitationMessageCleaned(t *testing.T) {
	srv := func() mcp.Transport {
		s := mcp.NewServer(&mcp.Implementation{Name: "asker", Version: "1"}, nil)
		mcp.AddTool(s, &mcp.Tool{Name: "ask", Description: "Ask."},
			func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
				res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: laced("What is your name?"),
					RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}}})
				if err != nil {
					return nil, nil, err
				}
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: res.Action}}}, nil, nil
			})
		ct, st := mcp.NewInMemoryTransports()
		ss, err := s.Connect(context.Background(), before2026{st}, nil)
		require.NoError(t, err)
		t.Cleanup(func() { ss.Close() })
		return ct
	}
	var asked string
	set := connect(t, mcptools.Config{Servers: []mcptools.ServerConfig{{Name: "ask", Transport: srv}},
		Elicit: func(_ context.Context, e mcptools.Elicitation) (*mcp.ElicitResult, error) {
			asked = e.Message
			return &mcp.ElicitResult{Action: "decline"}, nil
		}})
	out, err := toolByName(t, set, "ask__ask").Call(t.Context(), json.RawMessage(`{}`))
	require.NoError(t, err)
	assert.Equal(t, "decline", out)
	assert.Equal(t, -1, runes.UnsafeAt(asked), "message %q", asked)
	assert.True(t, strings.HasPrefix(asked, "What is your name?xxx"), "message %q", asked)
}
