package mcptools

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A tool whose "execution.taskSupport" is "required" (MCP 2025-11-25, the
// Tasks extension since 2026-07-28) must be called as a task: a plain
// tools/call fails with -32601 "requires task augmentation". This client
// calls such a tool as a task through the Tasks extension when the server
// speaks 2026-07-28 over HTTP and declares the extension (taskcall.go);
// otherwise the tool is not offered to the model, and an
// [EventToolNotOffered] says so. The Go SDK's Tool type does not carry the
// "execution" field, so the raw tools/list results are read as they pass:
// through the connection for stdio and in-process transports, through the
// HTTP client for streamable HTTP (whose connection must not be wrapped).

// taskOnly records the tools a server lists as requiring task augmentation.
type taskOnly struct {
	mu    sync.Mutex
	names map[string]bool
}

// has reports whether the server listed tool name as task-only.
func (t *taskOnly) has(name string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.names[name]
}

// result reads a JSON-RPC result; only a tools/list result with a tool
// whose execution.taskSupport is "required" changes anything.
func (t *taskOnly) result(raw []byte) {
	if !bytes.Contains(raw, []byte("taskSupport")) {
		return
	}
	var res struct {
		Tools []struct {
			Name      string `json:"name"`
			Execution *struct {
				TaskSupport string `json:"taskSupport"`
			} `json:"execution"`
		} `json:"tools"`
	}
	if json.Unmarshal(raw, &res) != nil {
		return // not a tools/list result; the SDK reports real errors
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, tool := range res.Tools {
		if tool.Execution != nil && tool.Execution.TaskSupport == "required" {
			if t.names == nil {
				t.names = map[string]bool{}
			}
			t.names[tool.Name] = true
		}
	}
}

// message reads a whole JSON-RPC message (from an HTTP body or an SSE
// event) and passes on its result.
func (t *taskOnly) message(raw []byte) {
	if !bytes.Contains(raw, []byte("taskSupport")) {
		return
	}
	var m struct {
		Result json.RawMessage `json:"result"`
	}
	if json.Unmarshal(raw, &m) == nil && m.Result != nil {
		t.result(m.Result)
	}
}

// taskTransport wraps a stdio or in-process transport so that the
// results read pass through a taskOnly.
type taskTransport struct {
	mcp.Transport
	seen *taskOnly
}

func (t taskTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return taskConn{c, t.seen}, nil
}

type taskConn struct {
	mcp.Connection
	seen *taskOnly
}

func (c taskConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	m, err := c.Connection.Read(ctx)
	if r, ok := m.(*jsonrpc.Response); ok && r.Result != nil {
		c.seen.result(r.Result)
	}
	return m, err
}

// taskSniffer is an http.RoundTripper that shows the JSON-RPC messages
// of every response body (JSON or server-sent events) to a taskOnly as
// they are read.
type taskSniffer struct {
	seen *taskOnly
	next http.RoundTripper
}

func (t taskSniffer) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(r)
	if err != nil || resp.Body == nil {
		return resp, err
	}
	ct := resp.Header.Get("Content-Type")
	switch {
	case strings.HasPrefix(ct, "application/json"):
		resp.Body = &sniffBody{ReadCloser: resp.Body, seen: t.seen}
	case strings.HasPrefix(ct, "text/event-stream"):
		resp.Body = &sniffBody{ReadCloser: resp.Body, seen: t.seen, sse: true}
	}
	return resp, nil
}

// maxSniff bounds what a sniffBody keeps of one message, in bytes; a
// larger message is passed on unread (the SDK still gets it whole).
const maxSniff = 16 << 20

// sniffBody passes a response body through while collecting its
// messages: the whole body for JSON, each event's data lines for SSE.
type sniffBody struct {
	io.ReadCloser
	seen *taskOnly
	sse  bool
	line []byte // SSE: the incomplete line; JSON: the body so far
	data []byte // SSE: the current event's data
	over bool   // the current message passed maxSniff
}

func (b *sniffBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.feed(p[:n])
	if err == io.EOF {
		if !b.sse && !b.over {
			b.seen.message(b.line)
		}
		b.line = nil
	}
	return n, err
}

func (b *sniffBody) feed(p []byte) {
	if !b.sse {
		if len(b.line)+len(p) > maxSniff {
			b.over, b.line = true, nil
		}
		if !b.over {
			b.line = append(b.line, p...)
		}
		return
	}
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			b.line = append(b.line, p...)
			if len(b.line) > maxSniff {
				b.over, b.line = true, b.line[:0]
			}
			return
		}
		b.line = append(b.line, p[:i]...)
		p = p[i+1:]
		b.sseLine(bytes.TrimSuffix(b.line, []byte("\r")))
		b.line = b.line[:0]
	}
}

func (b *sniffBody) sseLine(line []byte) {
	if len(line) == 0 { // end of event
		if !b.over {
			b.seen.message(b.data)
		}
		b.data, b.over = b.data[:0], false
		return
	}
	if v, ok := bytes.CutPrefix(line, []byte("data:")); ok {
		if len(b.data)+len(v) > maxSniff {
			b.over = true
		}
		if !b.over {
			b.data = append(b.data, bytes.TrimPrefix(v, []byte(" "))...)
			b.data = append(b.data, '\n')
		}
	}
}
