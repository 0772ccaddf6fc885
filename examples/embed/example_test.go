package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/existence-loop/sdk/existence"
	"github.com/existence-loop/sdk/hostaccess"
	"github.com/existence-loop/sdk/llm/llmtest"
	"github.com/existence-loop/sdk/monitor"
	"github.com/existence-loop/sdk/store/taskqueue"
)

// exampleServer returns the service's handler (the monitor) over an agent
// on a fake model, with the token "s3cret" and a task queue whose clock
// stands still.
func exampleServer() (http.Handler, func() error) {
	a, err := existence.New(context.Background(), existence.Config{ID: "agent", Name: "Wren", Model: llmtest.NewFake()})
	if err != nil {
		panic(err)
	}
	now := func() time.Time { return time.Date(2026, 4, 13, 12, 0, 0, 0, time.UTC) }
	m, err := monitor.New(monitor.Config{Runner: hostaccess.Single(a), Tasks: taskqueue.NewMemory(taskqueue.Options{Now: now}), Token: "s3cret", Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		panic(err)
	}
	return m, a.Close
}

// POST /api/tasks assigns a task to the agent; the answer is the task.
func Example_submitTask() {
	h, closeAgent := exampleServer()
	defer closeAgent()

	req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:8080/api/tasks", strings.NewReader(`{"description": "Write notes/hello.md", "agent": "agent"}`))
	req.Header.Set("Authorization", "Bearer s3cret")
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	fmt.Println(rec.Code)
	fmt.Print(rec.Body)
	// Output:
	// 201
	// {"id":"task-000001","description":"Write notes/hello.md","agent":"agent","status":"pending","submitted":"2026-04-13T12:00:00Z"}
}

// Bad requests get a 4xx status and a JSON error.
func Example_errors() {
	h, closeAgent := exampleServer()
	defer closeAgent()

	send := func(host, auth, body string) {
		req := httptest.NewRequest(http.MethodPost, "http://"+host+"/api/messages", strings.NewReader(body))
		req.Header.Set("Authorization", auth)
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		fmt.Print(rec.Code, " ", rec.Body)
	}
	send("127.0.0.1:8080", "", `{"text": "hello"}`)
	send("attacker.example", "Bearer s3cret", `{"text": "hello"}`)
	send("127.0.0.1:8080", "Bearer s3cret", `{"text": "hello"`)
	send("127.0.0.1:8080", "Bearer s3cret", `{"txt": "hello"}`)
	send("127.0.0.1:8080", "Bearer s3cret", `{"text": "  "}`)
	send("localhost:8080", "Bearer s3cret", `{"text": "hello"}`)
	// Output:
	// 401 {"error":"missing bearer token: send \"Authorization: Bearer TOKEN\", or open the page with ?token=TOKEN"}
	// 421 {"error":"host \"attacker.example\" is not allowed: open the monitor by localhost, a loopback address or the address it is bound to, or add the name to the allowed hosts"}
	// 400 {"error":"invalid JSON: unexpected end of the body"}
	// 400 {"error":"unknown field \"txt\""}
	// 400 {"error":"\"text\" is missing or blank"}
	// 202 {"status":"delivered","agents":[],"text":"hello"}
}
