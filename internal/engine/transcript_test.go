package engine

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// A transcript recorded from a server replays the same bodies (stripped),
// in each of the three reply shapes, and matches requests by body.
func TestRecordReplay(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		switch r.URL.Path {
		case "/api/chat":
			w.Header().Set("Content-Type", "application/x-ndjson")
			io.WriteString(w, `{"message":{"content":"a"},"done":false,"created_at":"2026-11-28T11:00:41Z"}`+"\n")
			io.WriteString(w, `{"message":{"content":""},"done":true,"done_reason":"length","eval_count":2,"eval_duration":123}`+"\n")
		case "/v1/chat/completions":
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "data: {\"id\":\"chatcmpl-abcdef123\",\"created\":1764327641,\"choices\":[]}\n\n")
			io.WriteString(w, "data: [DONE]\n\n")
		default:
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			io.WriteString(w, `{"error":"request (9 tokens) exceeds the available context size (8 tokens), try increasing it","echo":`+string(body)+`}`)
		}
	}))
	defer srv.Close()
	t.Chdir(t.TempDir())

	send := func(c *http.Client, base, path, body string) (int, string) {
		resp, err := c.Post(base+path, "application/json", strings.NewReader(body))
		require.NoError(t, err)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp.StatusCode, string(b)
	}
	exchanges := [][2]string{{"/api/chat", `{"model":"m"}`}, {"/v1/chat/completions", `{}`}, {"/api/show", `{"model":"x"}`}, {"/api/show", `{"model":"y"}`}}

	t.Run("record", func(t *testing.T) {
		s := &Server{Engine: "test"}
		c := s.Record(t, "roundtrip", true)
		for _, e := range exchanges {
			send(c, srv.URL, e[0], e[1])
		}
	})
	b, err := os.ReadFile(TranscriptPath("roundtrip"))
	require.NoError(t, err)
	require.NotContains(t, string(b), "chatcmpl-abcdef123")
	require.NotContains(t, string(b), "11:00:41")

	t.Run("replay", func(t *testing.T) {
		rp := Replay(t, "roundtrip")
		c := &http.Client{}
		// Out of order: the /api/show exchanges match by body.
		status, body := send(c, rp.URL, "/api/show", `{"model":"y"}`)
		require.Equal(t, http.StatusBadRequest, status)
		require.Contains(t, body, `"echo":{"model":"y"}`)
		status, body = send(c, rp.URL, "/api/chat", `{"model":"m"}`)
		require.Equal(t, http.StatusOK, status)
		require.Equal(t, `{"created_at":"2026-01-01T00:00:00Z","done":false,"message":{"content":"a"}}`+"\n"+
			`{"done":true,"done_reason":"length","eval_count":2,"eval_duration":0,"message":{"content":""}}`+"\n", body)
		_, body = send(c, rp.URL, "/v1/chat/completions", `{}`)
		require.Equal(t, "data: {\"choices\":[],\"created\":0,\"id\":\"chatcmpl-0\"}\n\ndata: [DONE]\n\n", body)
		_, body = send(c, rp.URL, "/api/show", `{"model":"x"}`)
		require.Contains(t, body, `"echo":{"model":"x"}`)
	})
}
