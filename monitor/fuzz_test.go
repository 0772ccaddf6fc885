package monitor_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/hostaccess"
	"github.com/existence-loop/sdk/monitor"
)

// FuzzServeHTTP sends arbitrary methods, paths, hosts, headers and bodies
// to the monitor: it must never panic, never fail with a 5xx, and answer
// every API error with a JSON {"error": "..."} body.
func FuzzServeHTTP(f *testing.F) {
	for _, s := range []struct{ method, path, host, ctype, auth, csrf, body string }{
		{"POST", "/api/tasks", "127.0.0.1", "application/json", "Bearer tok", "", `{"description": "write a note"}`},
		{"POST", "/api/tasks", "127.0.0.1", "application/json", "Bearer tok", "", `{"description": "x", "agent": "../../etc"}`},
		{"POST", "/api/tasks", "localhost:1", "application/json; charset=utf-8", "Bearer tok", "", `{"description": "\u0000\ud800"}`},
		{"POST", "/api/messages", "[::1]:80", "application/json", "Bearer tok", "", `{"text": "hi", "agents": ["scout", "nobody"]}`},
		{"POST", "/api/messages", "127.0.0.1", "application/json", "bearer tok", "", `{"text": 1e400}`},
		{"POST", "/api/messages", "127.0.0.1", "application/json", "Bearer tok", "", `{"text": "a", "text": "b"}`},
		{"POST", "/api/tasks", "127.0.0.1", "application/json", "Bearer tok", "", `{"description": "a", "\u0064escription": "b"}`},
		{"POST", "/api/messages", "evil.example", "application/json", "Bearer tok", "", strings.Repeat("[", 10000)},
		{"POST", "/api/requests/1/answer", "127.0.0.1", "application/json", "", "x", `{"status": "approved"}`},
		{"GET", "/api/agents?limit=9999&offset=-3&sort=x", "127.0.0.1", "", "Bearer tok", "", ""},
		{"GET", "/api/agents/%2e%2e", "127.0.0.1", "", "Bearer tok", "", ""},
		{"PATCH", "/api/agents", "127.0.0.1", "", "Bearer tok", "", ""},
		{"GET", "/?token=tok", "127.0.0.1", "", "", "", ""},
		{"GET", "/api/requests?status=open", "127.0.0.1", "", "Bearer tok\x00", "", ""},
	} {
		f.Add(s.method, s.path, s.host, s.ctype, s.auth, s.csrf, s.body)
	}
	e := newEnv(f, 3, monitor.Config{Token: "tok"})
	f.Fuzz(func(t *testing.T, method, path, host, ctype, auth, csrf, body string) {
		req, err := http.NewRequest(method, "http://monitor.test"+path, strings.NewReader(body))
		if err != nil || req.URL.Path == "/api/events" {
			t.Skip() // not a request a client could send, or a stream (tested apart)
		}
		req.Host = host
		req.Header.Set("Content-Type", ctype)
		req.Header.Set("Authorization", auth)
		req.Header.Set(hostaccess.CSRFHeader, csrf)
		rec := httptest.NewRecorder()
		e.mon.ServeHTTP(rec, req)
		require.Less(t, rec.Code, 500, "%s %q: %s", method, path, rec.Body)
		if rec.Code >= 400 && rec.Header().Get("Content-Type") == "application/json" {
			var eb monitor.ErrorBody
			require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &eb), "status %d with body %q", rec.Code, rec.Body)
			require.NotEmpty(t, eb.Error, "status %d with body %q", rec.Code, rec.Body)
		}
	})
}
