package llmtest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/existence-loop/sdk/llm"
)

// Script is one scripted answer of a fake provider server, in protocol-neutral
// terms. A [Harness] translates it into its provider's wire format exactly as
// the real server would write it (Ollama: NDJSON lines ending with a "done"
// object; OpenAI: SSE "data:" events ending with "[DONE]").
//
// The zero Script answers HTTP 200 with an empty reply.
type Script struct {
	// Text is the reply text (the assistant message content).
	Text string
	// Thinking is reasoning the provider returns in its separate field
	// (Ollama message.thinking, OpenAI-compatible reasoning_content).
	Thinking string
	// ToolCalls are the tool calls of the reply, in order. A harness writes
	// their IDs only when non-empty and when the protocol carries IDs.
	ToolCalls []llm.ToolCall
	// DoneReason is the provider's stop reason ("stop", "length"). Empty
	// means the provider's natural value: "stop" for text, and for tool
	// calls whatever the provider sends (Ollama "stop", OpenAI "tool_calls").
	DoneReason string
	// PromptTokens and OutputTokens are the token counts the server reports.
	PromptTokens, OutputTokens int
	// Chunks splits Text into this many stream chunks (see [SplitChunks]).
	// Values below 2 send Text in one chunk. Ignored when not streaming.
	Chunks int
	// Status, when non-zero, makes the server answer with this HTTP status
	// and ErrorMessage in the provider's error body instead of a reply.
	Status int
	// ErrorMessage is the error text that goes with Status.
	ErrorMessage string
	// RetryAfter is the value of the Retry-After header sent with Status
	// (for example "7", in seconds). Empty sends no header.
	RetryAfter string
	// ModelMissing makes the server answer as the provider does for a model
	// it does not have (Ollama: 404 {"error":"model 'NAME' not found"}),
	// naming the requested model.
	ModelMissing bool
	// Hang makes the server record the request and then never answer
	// (not even headers) until the client goes away.
	Hang bool
	// HangStream makes the server send the status, headers and the first
	// part of the reply (the first chunks when streaming), flush, and then
	// never finish until the client goes away.
	HangStream bool
	// OnReceive, when non-nil, is called by the server once per request
	// after it has decoded and recorded the request, and for HangStream
	// after it has flushed the partial reply. [Run] uses it to cancel a
	// request at a known point without sleeping.
	OnReceive func()
}

// Recorded is what a harness server decoded from the wire for one request,
// mapped back to [llm] terms so that [Run] can compare it with the request
// it sent.
type Recorded struct {
	// Path is the HTTP path of the request, e.g. "/api/chat".
	Path string
	// Model is the model name sent on the wire.
	Model string
	// Stream reports whether the request asked for a streamed reply.
	Stream bool
	// Messages is the conversation as sent.
	Messages []llm.Message
	// Format is the JSON Schema sent as the structured-output format, nil
	// when none was sent.
	Format json.RawMessage
	// Tools are the tool definitions as sent.
	Tools []llm.ToolDef
	// Temperature and Seed are nil when not sent.
	Temperature *float64
	Seed        *int
	// MaxTokens is the output token cap sent, 0 when not sent.
	MaxTokens int
	// Raw is the request body exactly as received.
	Raw json.RawMessage
}

// Harness connects [Run] to one adapter and a protocol-faithful fake server
// of its provider, usually built on net/http/httptest.
type Harness struct {
	// Name names the adapter in test output, e.g. "ollama".
	Name string
	// New starts a fake server that answers the scripts in order, one per
	// request, and returns a model configured against it with streaming on
	// or off. recorded returns a copy of what the server decoded so far, in
	// arrival order. The harness must stop the server with t.Cleanup, and
	// a Hang or HangStream handler must return when the client goes away.
	// A request that arrives after the scripts ran out should be answered
	// with HTTP 500, which makes the suite fail visibly.
	New func(t *testing.T, stream bool, scripts ...Script) (m llm.Model, recorded func() []Recorded)
	// Unreachable returns a model pointed at a closed local port.
	Unreachable func(t *testing.T) llm.Model
}

// watchdog bounds every Generate call in [Run]: an adapter that does not
// return in this time fails the test instead of hanging the suite.
const watchdog = 10 * time.Second

// deadline is the context deadline of the slow-server tests.
const deadline = 50 * time.Millisecond

// Run is the conformance suite every [llm.Model] adapter must pass. It runs
// each case as a subtest, streaming and non-streaming: plain text, chunked
// text, separate thinking, token counts and done reason, the JSON Schema
// format passed through unchanged, messages, temperature/seed/max tokens,
// the model override, tool definitions and tool calls, tool results, every
// error class ([llm.StatusError] 503/429/400/500 with Retry-After,
// [llm.ErrModelNotFound], [llm.ErrUnavailable], [llm.ErrTruncated],
// [llm.ErrEmpty]), cancellation, a slow server with a deadline, a stream
// that never ends, and concurrent use. It never sleeps; every Generate call
// is bounded by a 10 s watchdog.
func Run(t *testing.T, h Harness) {
	t.Helper()
	if h.New == nil {
		t.Fatal("llmtest.Run: Harness.New is nil")
	}
	for _, stream := range []bool{false, true} {
		name := "NoStream"
		if stream {
			name = "Stream"
		}
		t.Run(name, func(t *testing.T) {
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) { c.run(t, h, stream) })
			}
		})
	}
	t.Run("Unreachable", func(t *testing.T) {
		if h.Unreachable == nil {
			t.Skip("Harness.Unreachable is nil")
		}
		testUnreachable(t, h.Unreachable(t))
	})
}

type conformanceCase struct {
	name string
	run  func(t *testing.T, h Harness, stream bool)
}

var cases = []conformanceCase{
	{"Text", testText},
	{"Chunks", testChunks},
	{"Thinking", testThinking},
	{"Format", testFormat},
	{"Messages", testMessages},
	{"Options", testOptions},
	{"ZeroOptions", testZeroOptions},
	{"ModelOverride", testModelOverride},
	{"Tools", testTools},
	{"ToolResults", testToolResults},
	{"Status503RetryAfter", statusCase(503, "server busy, please try again.  maximum pending requests exceeded", "7", 7*time.Second)},
	{"Status429RetryAfter", statusCase(429, "rate limit exceeded", "2", 2*time.Second)},
	{"Status400", statusCase(400, `invalid format: expected "json" or a valid JSON schema`, "", 0)},
	{"Status500", statusCase(500, "llama runner process has terminated: exit status 2", "", 0)},
	{"ModelMissing", testModelMissing},
	{"Truncated", testTruncated},
	{"TruncatedWhitespace", testTruncatedWhitespace},
	{"Empty", testEmpty},
	{"Cancel", testCancel},
	{"Deadline", testDeadline},
	{"HangStream", testHangStream},
	{"Concurrent", testConcurrent},
}

func userRequest(text string) *llm.Request {
	return &llm.Request{Messages: []llm.Message{
		{Role: llm.RoleSystem, Content: "You are a test."},
		{Role: llm.RoleUser, Content: text},
	}}
}

// generate calls m.Generate, failing the test if it does not return within
// the watchdog.
func generate(t *testing.T, ctx context.Context, m llm.Model, req *llm.Request) (*llm.Response, error) {
	t.Helper()
	type result struct {
		resp *llm.Response
		err  error
	}
	done := make(chan result, 1)
	go func() {
		resp, err := m.Generate(ctx, req)
		done <- result{resp, err}
	}()
	timer := time.NewTimer(watchdog)
	defer timer.Stop()
	select {
	case r := <-done:
		return r.resp, r.err
	case <-timer.C:
		t.Fatalf("Generate did not return within %v", watchdog)
		return nil, nil
	}
}

func mustGenerate(t *testing.T, m llm.Model, req *llm.Request) *llm.Response {
	t.Helper()
	resp, err := generate(t, context.Background(), m, req)
	if err != nil {
		t.Fatalf("Generate: unexpected error: %v", err)
	}
	if resp == nil {
		t.Fatal("Generate returned a nil Response and a nil error")
	}
	return resp
}

func mustFail(t *testing.T, m llm.Model, req *llm.Request) error {
	t.Helper()
	resp, err := generate(t, context.Background(), m, req)
	if err == nil {
		t.Fatalf("Generate: want an error, got none (Response %+v)", resp)
	}
	return err
}

func onlyRecord(t *testing.T, recorded func() []Recorded) Recorded {
	t.Helper()
	recs := recorded()
	if len(recs) != 1 {
		t.Fatalf("server recorded %d requests, want 1", len(recs))
	}
	return recs[0]
}

// JSONEqual reports whether a and b hold the same JSON value, ignoring
// object key order and insignificant white space. Invalid JSON is never
// equal to anything.
func JSONEqual(a, b []byte) bool {
	var va, vb any
	if err := json.Unmarshal(a, &va); err != nil {
		return false
	}
	if err := json.Unmarshal(b, &vb); err != nil {
		return false
	}
	ca, err1 := json.Marshal(va)
	cb, err2 := json.Marshal(vb)
	return err1 == nil && err2 == nil && bytes.Equal(ca, cb)
}

func wantJSON(t *testing.T, what string, want, got []byte) {
	t.Helper()
	if !JSONEqual(want, got) {
		t.Errorf("%s: JSON differs\nwant: %s\n got: %s", what, want, got)
	}
}

func wantEq[T comparable](t *testing.T, what string, want, got T) {
	t.Helper()
	if want != got {
		t.Errorf("%s = %#v, want %#v", what, got, want)
	}
}

func wantMessages(t *testing.T, want, got []llm.Message) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("server got %d messages, want %d: %+v", len(got), len(want), got)
	}
	for i := range want {
		wantEq(t, fmt.Sprintf("message %d role", i), want[i].Role, got[i].Role)
		wantEq(t, fmt.Sprintf("message %d content", i), want[i].Content, got[i].Content)
	}
}

func testText(t *testing.T, h Harness, stream bool) {
	const text = "Hello — world ✓"
	m, recorded := h.New(t, stream, Script{Text: text, PromptTokens: 17, OutputTokens: 5})
	req := userRequest("Say hello.")
	resp := mustGenerate(t, m, req)

	wantEq(t, "Text", text, resp.Text)
	wantEq(t, "Thinking", "", resp.Thinking)
	wantEq(t, "DoneReason", llm.DoneStop, resp.DoneReason)
	wantEq(t, "PromptTokens", 17, resp.PromptTokens)
	wantEq(t, "OutputTokens", 5, resp.OutputTokens)
	wantEq(t, "len(ToolCalls)", 0, len(resp.ToolCalls))
	if resp.Duration <= 0 {
		t.Errorf("Duration = %v, want > 0", resp.Duration)
	}

	rec := onlyRecord(t, recorded)
	if rec.Path == "" {
		t.Error("recorded Path is empty")
	}
	if rec.Model == "" {
		t.Error("no model name on the wire")
	}
	wantEq(t, "Response.Model", rec.Model, resp.Model)
	wantEq(t, "wire stream", stream, rec.Stream)
	wantMessages(t, req.Messages, rec.Messages)
	if len(rec.Format) != 0 {
		t.Errorf("format sent for a free-text request: %s", rec.Format)
	}
	if len(rec.Tools) != 0 {
		t.Errorf("tools sent for a request without tools: %+v", rec.Tools)
	}
	if rec.Temperature != nil || rec.Seed != nil {
		t.Errorf("unset options were sent: temperature %v, seed %v", rec.Temperature, rec.Seed)
	}
	if rec.MaxTokens <= 0 {
		t.Error("no reply limit sent for a request without MaxTokens: every request bounds its reply (the adapter's default)")
	}
}

func testChunks(t *testing.T, h Harness, stream bool) {
	const text = "naïve café — 日本語 🚀 the quick brown fox jumps over the lazy dog"
	m, _ := h.New(t, stream, Script{Text: text, Chunks: 9, PromptTokens: 3, OutputTokens: 14})
	resp := mustGenerate(t, m, userRequest("Chunks."))
	wantEq(t, "Text", text, resp.Text)
	wantEq(t, "OutputTokens", 14, resp.OutputTokens)
	wantEq(t, "DoneReason", llm.DoneStop, resp.DoneReason)
}

func testThinking(t *testing.T, h Harness, stream bool) {
	const thinking = "The user wants a greeting. I will answer in JSON."
	const text = `{"greeting":"hi"}`
	m, _ := h.New(t, stream, Script{Thinking: thinking, Text: text, Chunks: 3})
	resp := mustGenerate(t, m, userRequest("Greet me."))
	wantEq(t, "Thinking", thinking, resp.Thinking)
	wantEq(t, "Text", text, resp.Text)
}

// FormatSchema is the JSON Schema the suite sends as [llm.Request.Format]. It
// uses keywords a naive adapter might drop or rewrite ($defs, $ref, enum,
// additionalProperties, non-ASCII descriptions) and is already strict-mode
// compatible, so an adapter must pass it unchanged.
const FormatSchema = `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object",
  "properties": {
    "action": {"type": "string", "enum": ["goal"], "description": "always \"goal\" — see spec §3"},
    "content": {"type": "string", "minLength": 1},
    "opinion": {"$ref": "#/$defs/opinion"}
  },
  "required": ["action", "content", "opinion"],
  "additionalProperties": false,
  "$defs": {
    "opinion": {
      "type": "object",
      "properties": {"text": {"type": "string"}, "domain": {"type": ["string", "null"]}},
      "required": ["text", "domain"],
      "additionalProperties": false
    }
  }
}`

func testFormat(t *testing.T, h Harness, stream bool) {
	const text = `{"action":"goal","content":"build a parser","opinion":{"text":"x","domain":null}}`
	m, recorded := h.New(t, stream, Script{Text: text})
	req := userRequest("Answer in JSON.")
	req.Format = json.RawMessage(FormatSchema)
	resp := mustGenerate(t, m, req)
	wantEq(t, "Text", text, resp.Text)
	rec := onlyRecord(t, recorded)
	wantJSON(t, "format on the wire", []byte(FormatSchema), rec.Format)
}

func testMessages(t *testing.T, h Harness, stream bool) {
	m, recorded := h.New(t, stream, Script{Text: "ok"})
	req := &llm.Request{Messages: []llm.Message{
		{Role: llm.RoleSystem, Content: "You are Cedar.\nYou explore."},
		{Role: llm.RoleUser, Content: "What is in /agentOS/workspace?"},
		{Role: llm.RoleAssistant, Content: `{"action":"goal","content":"list it"}`},
		{Role: llm.RoleUser, Content: "Quotes \" backslashes \\ tabs \t and — dashes."},
	}}
	mustGenerate(t, m, req)
	wantMessages(t, req.Messages, onlyRecord(t, recorded).Messages)
}

func testOptions(t *testing.T, h Harness, stream bool) {
	m, recorded := h.New(t, stream, Script{Text: "ok"})
	req := userRequest("Options.")
	req.Temperature = llm.Ptr(0.25)
	req.Seed = llm.Ptr(42)
	req.MaxTokens = 256
	mustGenerate(t, m, req)
	rec := onlyRecord(t, recorded)
	if rec.Temperature == nil || *rec.Temperature != 0.25 {
		t.Errorf("temperature on the wire = %v, want 0.25", deref(rec.Temperature))
	}
	if rec.Seed == nil || *rec.Seed != 42 {
		t.Errorf("seed on the wire = %v, want 42", deref(rec.Seed))
	}
	wantEq(t, "max tokens on the wire", 256, rec.MaxTokens)
}

// testZeroOptions checks that an explicit zero temperature and seed are sent,
// not mistaken for "unset".
func testZeroOptions(t *testing.T, h Harness, stream bool) {
	m, recorded := h.New(t, stream, Script{Text: "ok"})
	req := userRequest("Zero options.")
	req.Temperature = llm.Ptr(0.0)
	req.Seed = llm.Ptr(0)
	mustGenerate(t, m, req)
	rec := onlyRecord(t, recorded)
	if rec.Temperature == nil || *rec.Temperature != 0 {
		t.Errorf("temperature on the wire = %v, want an explicit 0", deref(rec.Temperature))
	}
	if rec.Seed == nil || *rec.Seed != 0 {
		t.Errorf("seed on the wire = %v, want an explicit 0", deref(rec.Seed))
	}
}

func deref[T any](p *T) any {
	if p == nil {
		return "<unset>"
	}
	return *p
}

func testModelOverride(t *testing.T, h Harness, stream bool) {
	m, recorded := h.New(t, stream, Script{Text: "ok"})
	req := userRequest("Override.")
	req.Model = "override-model:7b"
	resp := mustGenerate(t, m, req)
	wantEq(t, "model on the wire", "override-model:7b", onlyRecord(t, recorded).Model)
	wantEq(t, "Response.Model", "override-model:7b", resp.Model)
}

// Tool definitions used by the suite. Their parameter schemas use only the
// keywords every provider's tool format carries (type, properties,
// description, required, enum).
var suiteTools = []llm.ToolDef{
	{
		Name:        "read_file",
		Description: "Read a file from the workspace.",
		Parameters:  json.RawMessage(`{"type":"object","properties":{"path":{"type":"string","description":"Path under /agentOS/workspace"}},"required":["path"]}`),
	},
	{
		Name:        "write_file",
		Description: "Write a file — replaces it.",
		Parameters:  json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"},"content":{"type":"string"},"mode":{"type":"string","enum":["create","overwrite"]}},"required":["path","content"]}`),
	},
}

func testTools(t *testing.T, h Harness, stream bool) {
	calls := []llm.ToolCall{
		{Name: "read_file", Arguments: json.RawMessage(`{"path":"/agentOS/workspace/notes.md"}`)},
		{Name: "write_file", Arguments: json.RawMessage(`{"path":"a.txt","content":"hi — there","mode":"create"}`)},
	}
	m, recorded := h.New(t, stream, Script{ToolCalls: calls, PromptTokens: 40, OutputTokens: 21})
	req := userRequest("Use the tools.")
	req.Tools = suiteTools
	resp := mustGenerate(t, m, req)

	rec := onlyRecord(t, recorded)
	if len(rec.Tools) != len(suiteTools) {
		t.Fatalf("server got %d tools, want %d: %+v", len(rec.Tools), len(suiteTools), rec.Tools)
	}
	for i, want := range suiteTools {
		got := rec.Tools[i]
		wantEq(t, fmt.Sprintf("tool %d name", i), want.Name, got.Name)
		wantEq(t, fmt.Sprintf("tool %d description", i), want.Description, got.Description)
		wantJSON(t, fmt.Sprintf("tool %d parameters", i), want.Parameters, got.Parameters)
	}

	if len(resp.ToolCalls) != len(calls) {
		t.Fatalf("got %d tool calls, want %d: %+v", len(resp.ToolCalls), len(calls), resp.ToolCalls)
	}
	ids := map[string]bool{}
	for i, want := range calls {
		got := resp.ToolCalls[i]
		wantEq(t, fmt.Sprintf("tool call %d name", i), want.Name, got.Name)
		wantJSON(t, fmt.Sprintf("tool call %d arguments", i), want.Arguments, got.Arguments)
		if got.ID == "" {
			t.Errorf("tool call %d has no ID", i)
		}
		if ids[got.ID] {
			t.Errorf("tool call %d: duplicate ID %q", i, got.ID)
		}
		ids[got.ID] = true
	}
	wantEq(t, "DoneReason", llm.DoneToolCalls, resp.DoneReason)
	wantEq(t, "OutputTokens", 21, resp.OutputTokens)
}

func testToolResults(t *testing.T, h Harness, stream bool) {
	m, recorded := h.New(t, stream, Script{Text: "The notes have two lines."})
	args := json.RawMessage(`{"path":"notes.md"}`)
	req := &llm.Request{
		Tools: suiteTools,
		Messages: []llm.Message{
			{Role: llm.RoleUser, Content: "Read my notes."},
			{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "call_0", Name: "read_file", Arguments: args}}},
			{Role: llm.RoleTool, ToolCallID: "call_0", Name: "read_file", Content: "line one\nline two"},
		},
	}
	resp := mustGenerate(t, m, req)
	wantEq(t, "Text", "The notes have two lines.", resp.Text)

	got := onlyRecord(t, recorded).Messages
	wantMessages(t, req.Messages, got)
	if len(got) != 3 {
		return
	}
	if len(got[1].ToolCalls) != 1 {
		t.Fatalf("assistant message carries %d tool calls on the wire, want 1", len(got[1].ToolCalls))
	}
	wantEq(t, "assistant tool call name", "read_file", got[1].ToolCalls[0].Name)
	wantJSON(t, "assistant tool call arguments", args, got[1].ToolCalls[0].Arguments)
	// Providers link a tool result to its call by ID (OpenAI) or by tool
	// name (Ollama); what the wire carries must be right, and it must carry
	// at least one of them.
	tool := got[2]
	if tool.ToolCallID == "" && tool.Name == "" {
		t.Error("tool result carries neither a tool call ID nor a tool name")
	}
	if tool.ToolCallID != "" {
		wantEq(t, "tool result tool_call_id", "call_0", tool.ToolCallID)
	}
	if tool.Name != "" {
		wantEq(t, "tool result name", "read_file", tool.Name)
	}
}

func statusCase(status int, message, retryAfter string, wantRetry time.Duration) func(*testing.T, Harness, bool) {
	return func(t *testing.T, h Harness, stream bool) {
		m, _ := h.New(t, stream, Script{Status: status, ErrorMessage: message, RetryAfter: retryAfter})
		err := mustFail(t, m, userRequest("Status."))
		var se llm.StatusError
		if !errors.As(err, &se) {
			t.Fatalf("error %v (%T) is not an llm.StatusError", err, err)
		}
		wantEq(t, "StatusCode", status, se.StatusCode)
		wantEq(t, "RetryAfter", wantRetry, se.RetryAfter)
		if se.Provider == "" {
			t.Error("StatusError.Provider is empty")
		}
		if !strings.Contains(se.Message, message) {
			t.Errorf("StatusError.Message = %q, want it to contain %q", se.Message, message)
		}
		for _, sentinel := range []error{llm.ErrModelNotFound, llm.ErrUnavailable, llm.ErrEmpty, llm.ErrTruncated} {
			if errors.Is(err, sentinel) {
				t.Errorf("HTTP %d error %v matches %v", status, err, sentinel)
			}
		}
	}
}

func testModelMissing(t *testing.T, h Harness, stream bool) {
	m, _ := h.New(t, stream, Script{ModelMissing: true})
	req := userRequest("Missing.")
	req.Model = "no-such-model:1b"
	err := mustFail(t, m, req)
	if !errors.Is(err, llm.ErrModelNotFound) {
		t.Fatalf("error %v does not match llm.ErrModelNotFound", err)
	}
	var mnf *llm.ModelNotFoundError
	if !errors.As(err, &mnf) {
		t.Fatalf("error %v (%T) is not an *llm.ModelNotFoundError", err, err)
	}
	wantEq(t, "ModelNotFoundError.Model", "no-such-model:1b", mnf.Model)
	if mnf.Hint == "" {
		t.Error("ModelNotFoundError.Hint is empty")
	}
	if !strings.Contains(err.Error(), mnf.Hint) {
		t.Errorf("error text %q does not show the hint %q", err.Error(), mnf.Hint)
	}
}

func testUnreachable(t *testing.T, m llm.Model) {
	err := mustFail(t, m, userRequest("Anyone there?"))
	if !errors.Is(err, llm.ErrUnavailable) {
		t.Fatalf("error %v (%T) does not match llm.ErrUnavailable", err, err)
	}
	var ue *llm.UnavailableError
	if !errors.As(err, &ue) {
		t.Fatalf("error %v (%T) is not an *llm.UnavailableError", err, err)
	}
	if ue.URL == "" {
		t.Error("UnavailableError.URL is empty")
	}
	if ue.Hint == "" {
		t.Error("UnavailableError.Hint is empty")
	}
	if !strings.Contains(err.Error(), ue.Hint) {
		t.Errorf("error text %q does not show the hint %q", err.Error(), ue.Hint)
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("unreachable error %v matches a context error", err)
	}
}

func testTruncated(t *testing.T, h Harness, stream bool) {
	const partial = `{"action":"goal","content":"build a`
	m, _ := h.New(t, stream, Script{Text: partial, DoneReason: "length", PromptTokens: 9, OutputTokens: 64, Chunks: 4})
	err := mustFail(t, m, userRequest("Truncate."))
	if !errors.Is(err, llm.ErrTruncated) {
		t.Fatalf("error %v does not match llm.ErrTruncated", err)
	}
	var te *llm.TruncatedError
	if !errors.As(err, &te) {
		t.Fatalf("error %v (%T) is not an *llm.TruncatedError", err, err)
	}
	if te.Response == nil {
		t.Fatal("TruncatedError.Response is nil")
	}
	wantEq(t, "partial Text", partial, te.Response.Text)
	wantEq(t, "partial DoneReason", llm.DoneLength, te.Response.DoneReason)
	wantEq(t, "partial OutputTokens", 64, te.Response.OutputTokens)
	wantEq(t, "partial PromptTokens", 9, te.Response.PromptTokens)
}

// testTruncatedWhitespace: a whitespace flood that hits the token limit is a
// truncation, not an empty reply.
func testTruncatedWhitespace(t *testing.T, h Harness, stream bool) {
	flood := strings.Repeat("\n \t", 100)
	m, _ := h.New(t, stream, Script{Text: flood, DoneReason: "length", OutputTokens: 300, Chunks: 5})
	err := mustFail(t, m, userRequest("Flood."))
	if !errors.Is(err, llm.ErrTruncated) {
		t.Fatalf("error %v does not match llm.ErrTruncated", err)
	}
	if errors.Is(err, llm.ErrEmpty) {
		t.Errorf("truncated whitespace flood %v also matches llm.ErrEmpty", err)
	}
}

func testEmpty(t *testing.T, h Harness, stream bool) {
	for _, tc := range []struct {
		name   string
		script Script
	}{
		{"NoText", Script{}},
		{"Whitespace", Script{Text: " \n\t \n", Chunks: 2}},
		{"ThinkingOnly", Script{Thinking: "I should answer in JSON but I will not."}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, _ := h.New(t, stream, tc.script)
			err := mustFail(t, m, userRequest("Empty."))
			if !errors.Is(err, llm.ErrEmpty) {
				t.Fatalf("error %v (%T) does not match llm.ErrEmpty", err, err)
			}
		})
	}
}

// received returns a Script.OnReceive func and the channel it closes.
func received() (func(), <-chan struct{}) {
	ch := make(chan struct{})
	var once sync.Once
	return func() { once.Do(func() { close(ch) }) }, ch
}

func testCancel(t *testing.T, h Harness, stream bool) {
	onReceive, got := received()
	m, _ := h.New(t, stream, Script{Hang: true, OnReceive: onReceive})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-got
		cancel()
	}()
	_, err := generate(t, ctx, m, userRequest("Hang."))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v (%T) does not wrap context.Canceled", err, err)
	}
}

func testDeadline(t *testing.T, h Harness, stream bool) {
	m, _ := h.New(t, stream, Script{Hang: true})
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	_, err := generate(t, ctx, m, userRequest("Slow."))
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("error %v (%T) does not wrap context.DeadlineExceeded", err, err)
	}
}

func testHangStream(t *testing.T, h Harness, stream bool) {
	onReceive, got := received()
	m, _ := h.New(t, stream, Script{Text: "this reply never ends", Chunks: 4, HangStream: true, OnReceive: onReceive})
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	// The deadline starts once the server has flushed the partial reply, so
	// the adapter is really stuck mid-body when it fires.
	go func() {
		<-got
		timer := time.NewTimer(deadline)
		defer timer.Stop()
		select {
		case <-timer.C:
			cancel(context.DeadlineExceeded)
		case <-ctx.Done():
		}
	}()
	_, err := generate(t, ctx, m, userRequest("Never ends."))
	if err == nil {
		t.Fatal("Generate returned no error for a stream that never ended")
	}
	if !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("error %v (%T) does not wrap the context's error", err, err)
	}
}

func testConcurrent(t *testing.T, h Harness, stream bool) {
	const n = 8
	scripts := make([]Script, n)
	for i := range scripts {
		scripts[i] = Script{Text: "same answer", PromptTokens: 2, OutputTokens: 2}
	}
	m, recorded := h.New(t, stream, scripts...)
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := m.Generate(context.Background(), userRequest(fmt.Sprintf("call %d", i)))
			switch {
			case err != nil:
				errs <- err
			case resp.Text != "same answer":
				errs <- fmt.Errorf("reply text = %q, want \"same answer\"", resp.Text)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	wantEq(t, "recorded requests", n, len(recorded()))
}

// SplitChunks splits s into n pieces of about equal length in code points,
// never inside a UTF-8 sequence. n below 2 returns s alone; pieces may be
// empty when s has fewer than n code points. Harness servers use it to
// stream [Script.Text].
func SplitChunks(s string, n int) []string {
	if n < 2 {
		return []string{s}
	}
	r := []rune(s)
	out := make([]string, 0, n)
	for i := 0; i < n; i++ {
		out = append(out, string(r[i*len(r)/n:(i+1)*len(r)/n]))
	}
	return out
}
