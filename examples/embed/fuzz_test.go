package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/existence-loop/sdk/existence"
	"github.com/existence-loop/sdk/existence/taskqueue"
	"github.com/existence-loop/sdk/llm/llmtest"
)

// FuzzServeHTTP sends arbitrary methods, paths, headers and bodies to the
// API: it must never panic, never fail with a 5xx, and answer every error
// with a JSON {"error": "..."} body.
func FuzzServeHTTP(f *testing.F) {
	for _, s := range []struct{ method, path, ctype, auth, body string }{
		{"POST", "/tasks", "application/json", "Bearer tok", `{"description": "write a note"}`},
		{"POST", "/tasks", "application/json", "Bearer tok", `{"description": "x", "agent": "../../etc"}`},
		{"POST", "/tasks", "application/json; charset=utf-8", "Bearer tok", `{"description": "\u0000\ud800"}`},
		{"POST", "/tasks", "application/json", "Bearer tok", `{"description": "a"} trailing`},
		{"POST", "/tasks", "application/json", "Bearer tok", `{"description": ["a"]}`},
		{"POST", "/messages", "application/json", "Bearer tok", `{"text": "hi", "text": ""}`},
		{"POST", "/messages", "application/json", "bearer tok", `{"text": 1e400}`},
		{"POST", "/messages", "application/jsonx", "Bearer tok", `{"text": "hi"}`},
		{"POST", "/messages", "application/json", "Bearer tok", strings.Repeat("[", 10000)},
		{"GET", "/agent", "", "Bearer tok", ""},
		{"GET", "/tasks/task-000001", "", "Bearer tok", ""},
		{"GET", "/tasks/%2e%2e", "", "Bearer tok", ""},
		{"PATCH", "/agent", "", "Bearer tok", ""},
		{"GET", "/agent", "", "Bearer tok\x00", ""},
		{"GET", "/agent", "", "Basic dG9r", ""},
	} {
		f.Add(s.method, s.path, s.ctype, s.auth, s.body)
	}
	ctx := context.Background()
	a, err := existence.New(ctx, existence.Config{ID: "agent", Name: "Wren", Model: llmtest.NewFake()})
	if err != nil {
		f.Fatal(err)
	}
	defer a.Close()

	f.Fuzz(func(t *testing.T, method, path, ctype, auth, body string) {
		// A fresh queue each time keeps submissions from piling up.
		h := newServer(serverConfig{Agent: a, Tasks: taskqueue.NewMemory(taskqueue.Options{}), Token: "tok"})
		req, err := http.NewRequest(method, "http://embed.test"+path, strings.NewReader(body))
		if err != nil {
			t.Skip() // not a request a client could send
		}
		if req.URL.Path == "/events" {
			t.Skip() // a stream; covered by the events tests
		}
		req.Header.Set("Content-Type", ctype)
		req.Header.Set("Authorization", auth)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code >= 500 {
			t.Fatalf("%s %q: status %d: %s", method, path, rec.Code, rec.Body)
		}
		if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
			t.Fatalf("Content-Type %q", ct)
		}
		if rec.Code >= 400 {
			var e errorBody
			if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || e.Error == "" {
				t.Fatalf("status %d with body %q", rec.Code, rec.Body)
			}
		}
	})
}
