package main

import (
	"bufio"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/existence/event"
)

// streamTimeout bounds every test's reads of an event stream, so that a
// missing event fails the test instead of hanging it.
const streamTimeout = 10 * time.Second

// sseMessage is one server-sent event or comment.
type sseMessage struct {
	Event   string
	Data    string
	Comment string
}

// sseClient reads an event stream.
type sseClient struct {
	t    *testing.T
	resp *http.Response
	r    *bufio.Reader
}

// read returns the next message, or the read error (io.EOF at the end).
func (c *sseClient) read() (sseMessage, error) {
	var m sseMessage
	for {
		line, err := c.r.ReadString('\n')
		if err != nil {
			return m, err
		}
		line = strings.TrimSuffix(line, "\n")
		switch {
		case line == "":
			return m, nil
		case strings.HasPrefix(line, ": "):
			m.Comment = strings.TrimPrefix(line, ": ")
		case strings.HasPrefix(line, "event: "):
			m.Event = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			require.Empty(c.t, m.Data, "one data line per event")
			m.Data = strings.TrimPrefix(line, "data: ")
		default:
			c.t.Fatalf("unexpected event-stream line %q", line)
		}
	}
}

// next returns the next message and fails the test on a read error.
func (c *sseClient) next() sseMessage {
	c.t.Helper()
	m, err := c.read()
	require.NoError(c.t, err)
	return m
}

// until returns the next event of kind, skipping others.
func (c *sseClient) until(kind event.Kind) event.Event {
	c.t.Helper()
	for {
		m := c.next()
		if m.Event != string(kind) {
			continue
		}
		var e event.Event
		require.NoError(c.t, json.Unmarshal([]byte(m.Data), &e), "data: %s", m.Data)
		return e
	}
}
