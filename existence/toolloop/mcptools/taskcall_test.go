package mcptools_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/existence/toolloop/mcptools"
	"github.com/existence-loop/sdk/llm"
)

// tasksServer is a 2026-07-28 server with the Tasks extension: the
// go-sdk's stateless handler answers server/discover (declaring the
// extension); tools/list, the task-only tool "research" and the
// extension's methods are answered by hand. Each tasks/get returns the
// next of polls (the last one repeats).
type tasksServer struct {
	t     *testing.T
	polls []string // Task objects' JSON without the common fields
	noExt bool     // server/discover declares no Tasks extension
	mu    sync.Mutex
	calls []string // "method Mcp-Name"
	n     int
}

func (s *tasksServer) start() *httptest.Server {
	caps := &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}}
	if !s.noExt {
		caps.AddExtension(mcptools.TasksExtension, nil)
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: "tasks", Version: "1"}, &mcp.ServerOptions{Capabilities: caps})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: true})
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Name string          `json:"name"`
				Meta json.RawMessage `json:"_meta"`
			} `json:"params"`
		}
		_ = json.Unmarshal(b, &m)
		s.mu.Lock()
		s.calls = append(s.calls, m.Method+" "+r.Header.Get("Mcp-Name"))
		s.mu.Unlock()
		reply := func(result string) {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":%s}`, m.ID, result)
		}
		const common = `"resultType":"complete","taskId":"t1","createdAt":"2026-12-03T10:00:00Z","lastUpdatedAt":"2026-12-03T10:00:00Z","ttlMs":null,"pollIntervalMs":1`
		switch {
		case m.Method == "tools/list":
			reply(`{"tools":[{"name":"research","inputSchema":{"type":"object"},"execution":{"taskSupport":"required"}}]}`)
		case m.Method == "tools/call" && m.Params.Name == "research":
			assert.Contains(s.t, string(m.Params.Meta), mcptools.TasksExtension, "the call declares the extension")
			reply(`{"resultType":"task","taskId":"t1","status":"working","createdAt":"2026-12-03T10:00:00Z","lastUpdatedAt":"2026-12-03T10:00:00Z","ttlMs":null,"pollIntervalMs":1}`)
		case m.Method == "tasks/get":
			s.mu.Lock()
			p := s.polls[min(s.n, len(s.polls)-1)]
			s.n++
			s.mu.Unlock()
			reply(`{` + common + `,` + p + `}`)
		case m.Method == "tasks/cancel":
			reply(`{"resultType":"complete"}`)
		default:
			r.Body = io.NopCloser(bytes.NewReader(b))
			h.ServeHTTP(w, r)
		}
	}))
	s.t.Cleanup(hs.Close)
	return hs
}

func (s *tasksServer) methods() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, c := range s.calls {
		if strings.HasPrefix(c, "tasks/") || strings.HasPrefix(c, "tools/call") {
			out = append(out, c)
		}
	}
	return out
}

func TestTaskOnlyToolThroughTheExtension(t *testing.T) {
	working := `"status":"working"`
	done := `"status":"completed","result":{"content":[{"type":"text","text":"found 3 papers"}],"isError":false}`
	tests := []struct {
		name    string
		polls   []string
		timeout time.Duration
		maxRes  int
		want    string // the result, or
		err     string // the error
		errIs   error
		calls   []string
	}{
		{name: "completes", polls: []string{working, done}, want: "found 3 papers",
			calls: []string{"tools/call research", "tasks/get t1", "tasks/get t1"}},
		{name: "tool error", polls: []string{`"status":"completed","result":{"content":[{"type":"text","text":"no papers"}],"isError":true}`},
			err: "no papers", errIs: mcptools.ErrToolError},
		{name: "failed", polls: []string{`"status":"failed","error":{"code":-32603,"message":"the index is down"}`},
			err: "the index is down", calls: []string{"tools/call research", "tasks/get t1"}},
		{name: "cancelled by the server", polls: []string{`"status":"cancelled","statusMessage":"shutting down"`}, err: "shutting down"},
		{name: "asks for input", polls: []string{`"status":"input_required","inputRequests":{}`}, err: "asks for input",
			calls: []string{"tools/call research", "tasks/get t1", "tasks/cancel t1"}},
		{name: "unknown status", polls: []string{`"status":"paused"`}, errIs: mcptools.ErrMalformed},
		{name: "completed without result", polls: []string{`"status":"completed"`}, errIs: mcptools.ErrMalformed},
		{name: "deadline", polls: []string{working}, timeout: 300 * time.Millisecond, err: "timed out"},
		{name: "result over the cap", polls: []string{`"status":"completed","result":{"content":[{"type":"text","text":"` + strings.Repeat("x", 200) + `"}]}`},
			maxRes: 100, errIs: mcptools.ErrTooLarge},
		{name: "reply over the byte cap", polls: []string{`"status":"working","statusMessage":"` + strings.Repeat("x", 5<<20) + `"`},
			errIs: llm.ErrReplyTooLarge},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := &tasksServer{t: t, polls: tc.polls}
			hs := s.start()
			ev := newEvents()
			sc := mcptools.ServerConfig{Name: "r", URL: hs.URL, Timeout: mcptools.Duration(tc.timeout), MaxResultBytes: tc.maxRes}
			set := connect(t, mcptools.Config{Servers: []mcptools.ServerConfig{sc}, Observer: ev.observe})
			out, err := toolByName(t, set, "r__research").Call(t.Context(), json.RawMessage(`{"q":"MCP"}`))
			if tc.err == "" && tc.errIs == nil {
				require.NoError(t, err)
				assert.Equal(t, tc.want, out)
				e := ev.wait(t, mcptools.EventTaskCreated)
				assert.Equal(t, "t1", e.Text)
			} else {
				require.Error(t, err)
				if tc.err != "" {
					assert.Contains(t, err.Error(), tc.err)
				}
				if tc.errIs != nil {
					assert.ErrorIs(t, err, tc.errIs)
				}
			}
			if tc.calls != nil {
				assert.Equal(t, tc.calls, s.methods())
			}
			if tc.name == "deadline" {
				assert.Contains(t, s.methods(), "tasks/cancel t1", "a task past the call's deadline is canceled")
			}
		})
	}
}

// TestTaskOnlyToolWithoutTheExtension: a 2026-07-28 server that does not
// declare the Tasks extension: its task-only tool is not offered.
func TestTaskOnlyToolWithoutTheExtension(t *testing.T) {
	s := &tasksServer{t: t, polls: []string{`"status":"working"`}, noExt: true}
	hs := s.start()
	ev := newEvents()
	set := connect(t, mcptools.Config{Servers: []mcptools.ServerConfig{{Name: "r", URL: hs.URL}}, Observer: ev.observe})
	assert.NotContains(t, names(set.Tools()), "r__research")
	e := ev.wait(t, mcptools.EventToolNotOffered)
	assert.Equal(t, "research", e.Tool)
	assert.Contains(t, e.String(), "this server offers none")
	assert.Empty(t, s.methods(), "nothing called")
}
