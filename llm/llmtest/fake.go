package llmtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/existence-loop/sdk/llm"
)

// ErrExhausted is returned (wrapped) by [Fake.Generate] when every scripted
// [Reply] has been used and [Fake.Repeat] is false.
var ErrExhausted = errors.New("llmtest: fake model has no scripted reply left")

// Reply is one scripted answer of a [Fake].
//
// A Reply is turned into an [llm.Response] the way a real adapter would:
// DoneReason "length" becomes an [*llm.TruncatedError] carrying the
// response, and a reply with no text (after trimming white space) and no tool
// calls becomes an error wrapping [llm.ErrEmpty]. Use Err for any other
// failure.
type Reply struct {
	// Text is the reply text.
	Text string
	// Thinking is the separate reasoning text.
	Thinking string
	// ToolCalls are returned in order; an empty ID is replaced by
	// "call_N", N being the call's index, as the Ollama adapter does.
	ToolCalls []llm.ToolCall
	// DoneReason defaults to "tool_calls" when there are tool calls and
	// "stop" otherwise.
	DoneReason string
	// PromptTokens and OutputTokens are reported unchanged.
	PromptTokens, OutputTokens int
	// Duration is reported as [llm.Response.Duration]; the fake never
	// measures time.
	Duration time.Duration
	// Err, when non-nil, is returned as is (not wrapped) with a nil
	// Response, so that errors.Is and errors.As see exactly this value.
	Err error
	// Hang makes Generate block until its context ends and then return an
	// error wrapping ctx.Err(); use it to test timeouts.
	Hang bool
}

// Fake is a scripted [llm.Model] for tests. Each Generate call records a deep
// copy of its request and returns the next [Reply]. It is safe for concurrent
// use; concurrent calls take replies in the order they acquire the fake's
// lock.
type Fake struct {
	// Repeat makes the fake answer with the last reply forever once the
	// script is used up, instead of failing with [ErrExhausted]. Set it
	// before the first call.
	Repeat bool
	// Model is reported as [llm.Response.Model] when the request does not
	// name a model. [NewFake] sets it to "fake".
	Model string

	mu       sync.Mutex
	replies  []Reply
	next     int
	requests []*llm.Request
}

var _ llm.Model = (*Fake)(nil)

// NewFake returns a Fake that answers with replies in order.
func NewFake(replies ...Reply) *Fake {
	return &Fake{Model: "fake", replies: append([]Reply(nil), replies...)}
}

// Add appends replies to the script.
func (f *Fake) Add(replies ...Reply) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.replies = append(f.replies, replies...)
}

// Generate records req and returns the next scripted reply.
//
// Errors: ctx.Err() (wrapped) when ctx is already done or ends during a
// Hang reply; a wrapped [ErrExhausted] when the script is used up; Reply.Err
// as is; an [*llm.TruncatedError] for DoneReason "length"; a wrapped
// [llm.ErrEmpty] for an empty reply. The request is recorded in every case.
func (f *Fake) Generate(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	f.mu.Lock()
	f.requests = append(f.requests, cloneRequest(req))
	call := len(f.requests)
	var (
		r  Reply
		ok = true
	)
	switch {
	case f.next < len(f.replies):
		r = f.replies[f.next]
		f.next++
	case f.Repeat && len(f.replies) > 0:
		r = f.replies[len(f.replies)-1]
	default:
		ok = false
	}
	model := f.Model
	f.mu.Unlock()

	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("llmtest: call %d: %w", call, err)
	}
	if !ok {
		return nil, fmt.Errorf("llmtest: call %d: %w", call, ErrExhausted)
	}
	if r.Hang {
		<-ctx.Done()
		return nil, fmt.Errorf("llmtest: call %d: %w", call, ctx.Err())
	}
	if r.Err != nil {
		return nil, r.Err
	}
	if req != nil && req.Model != "" {
		model = req.Model
	}
	return r.response(model)
}

func (r Reply) response(model string) (*llm.Response, error) {
	resp := &llm.Response{
		Model:        model,
		Text:         r.Text,
		Thinking:     r.Thinking,
		ToolCalls:    cloneToolCalls(r.ToolCalls),
		DoneReason:   r.DoneReason,
		PromptTokens: r.PromptTokens,
		OutputTokens: r.OutputTokens,
		Duration:     r.Duration,
	}
	for i := range resp.ToolCalls {
		if resp.ToolCalls[i].ID == "" {
			resp.ToolCalls[i].ID = fmt.Sprintf("call_%d", i)
		}
	}
	if resp.DoneReason == "" {
		resp.DoneReason = llm.DoneStop
		if len(resp.ToolCalls) > 0 {
			resp.DoneReason = llm.DoneToolCalls
		}
	}
	if resp.DoneReason == llm.DoneLength {
		return nil, &llm.TruncatedError{Response: resp}
	}
	if strings.TrimSpace(resp.Text) == "" && len(resp.ToolCalls) == 0 {
		return nil, fmt.Errorf("llmtest: model %q: %w", model, llm.ErrEmpty)
	}
	return resp, nil
}

// Requests returns deep copies of the requests received so far, oldest
// first. A nil request is recorded as nil.
func (f *Fake) Requests() []*llm.Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]*llm.Request, len(f.requests))
	for i, r := range f.requests {
		out[i] = cloneRequest(r)
	}
	return out
}

// Calls returns the number of Generate calls so far.
func (f *Fake) Calls() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.requests)
}

// Remaining returns the number of scripted replies not yet used.
func (f *Fake) Remaining() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.replies) - f.next
}

// Func adapts an ordinary function to [llm.Model], like http.HandlerFunc.
type Func func(ctx context.Context, req *llm.Request) (*llm.Response, error)

var _ llm.Model = Func(nil)

// Generate calls f(ctx, req).
func (f Func) Generate(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	return f(ctx, req)
}

func cloneRequest(r *llm.Request) *llm.Request {
	if r == nil {
		return nil
	}
	c := *r
	c.Format = cloneBytes(r.Format)
	if r.Messages != nil {
		c.Messages = make([]llm.Message, len(r.Messages))
		for i, m := range r.Messages {
			m.ToolCalls = cloneToolCalls(m.ToolCalls)
			c.Messages[i] = m
		}
	}
	if r.Tools != nil {
		c.Tools = make([]llm.ToolDef, len(r.Tools))
		for i, td := range r.Tools {
			td.Parameters = cloneBytes(td.Parameters)
			c.Tools[i] = td
		}
	}
	if r.Temperature != nil {
		c.Temperature = llm.Ptr(*r.Temperature)
	}
	if r.Seed != nil {
		c.Seed = llm.Ptr(*r.Seed)
	}
	return &c
}

func cloneToolCalls(calls []llm.ToolCall) []llm.ToolCall {
	if calls == nil {
		return nil
	}
	out := make([]llm.ToolCall, len(calls))
	for i, c := range calls {
		c.Arguments = cloneBytes(c.Arguments)
		out[i] = c
	}
	return out
}

func cloneBytes[B ~[]byte](b B) B {
	if b == nil {
		return nil
	}
	return B(bytes.Clone(b))
}
