package requests

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/existence-loop/sdk/existence/toolloop"
	"github.com/existence-loop/sdk/identity"
)

// askArgs are ask_human's arguments.
type askArgs struct {
	Kind string `json:"kind" jsonschema:"enum=approval,enum=question,enum=build_request,description=approval (a yes or no)\\, question (an answer in words) or build_request (something only a person can build or install)"`
	Text string `json:"text" jsonschema:"description=what you ask\\, self-contained: a person reads it later without context (at most 2000 characters)"`
}

// checkArgs are check_request's arguments.
type checkArgs struct {
	ID string `json:"id" jsonschema:"description=the request id ask_human returned\\, e.g. req-000003"`
}

// AskHuman returns the ask_human(kind, text) tool: it files a request from
// the calling agent (toolloop.Caller) to its human in q and returns its id.
// The answer arrives later in the agent's inbox (see [Deliver]); the agent
// can also look with check_request. Errors for the model: a bad kind, a
// blank text, too many open requests ([ErrFull]).
func AskHuman(q *Queue) toolloop.Tool {
	return toolloop.NewTool("ask_human",
		"File a request to your human: an approval, a question or a build request. A person answers later (minutes or hours); the answer reaches your inbox. Returns the request id.",
		func(ctx context.Context, a askArgs) (string, error) {
			caller, ok := toolloop.Caller(ctx)
			if !ok {
				return "", errors.New("ask_human: no calling agent")
			}
			kind, err := ParseKind(a.Kind)
			if err != nil {
				return "", err
			}
			r, err := q.Submit(ctx, caller.AgentID, kind, a.Text)
			if err != nil {
				return "", err
			}
			return fmt.Sprintf("filed %s request %s; a person will answer it later and the answer will reach your inbox; check it with check_request(%q)", r.Kind, r.ID, r.ID), nil
		})
}

// CheckRequest returns the check_request(id) tool: the status and answer of
// one of the calling agent's own requests. Another agent's request is
// reported as not found.
func CheckRequest(q *Queue) toolloop.Tool {
	return toolloop.NewTool("check_request",
		"Look at one of your requests to your human: its status (pending, approved, rejected, answered) and the answer.",
		func(ctx context.Context, a checkArgs) (string, error) {
			caller, ok := toolloop.Caller(ctx)
			if !ok {
				return "", errors.New("check_request: no calling agent")
			}
			r, err := q.Get(ctx, a.ID)
			if err == nil && r.Agent != caller.AgentID {
				err = fmt.Errorf("%w: %q", ErrNotFound, NormalizeID(a.ID))
			}
			if err != nil {
				return "", err
			}
			return Describe(r, q.now()), nil
		})
}

// Tools returns ask_human and check_request over q.
func Tools(q *Queue) []toolloop.Tool { return []toolloop.Tool{AskHuman(q), CheckRequest(q)} }

// Describe returns one line about r for a model or a person, e.g.
// `req-000003 (approval, pending for 2h5m): "publish the notes"` or
// `req-000003 (approval) approved: "go ahead"`.
func Describe(r Request, now time.Time) string {
	if r.Status == Pending {
		return fmt.Sprintf("%s (%s, pending for %v): %q", r.ID, r.Kind, r.Age(now).Round(time.Second), r.Text)
	}
	s := fmt.Sprintf("%s (%s: %q) %s", r.ID, r.Kind, headText(r.Text, 120), r.Status)
	if r.Answer != "" {
		s += ": " + r.Answer
	}
	return s
}

// MessageFrom is the sender of the inbox message [Deliver] writes.
const MessageFrom = "your human"

// Message returns the inbox message that tells the agent how r was
// answered, as it appears in "MESSAGES FROM YOUR PEERS" (spec §2 row 15):
// from [MessageFrom], text such as
// `your request req-000003 (approval: "publish the notes") was approved: go ahead`.
func Message(r Request) identity.AgentMessage {
	text := fmt.Sprintf("your request %s (%s: %q) was %s", r.ID, r.Kind, headText(r.Text, 120), r.Status)
	if r.Answer != "" {
		text += ": " + r.Answer
	}
	return identity.AgentMessage{From: MessageFrom, Text: text, At: r.Ended}
}

// Inbox is where [Deliver] puts an answer: *existence.Agent satisfies it.
type Inbox interface {
	DeliverToInbox(ctx context.Context, m identity.AgentMessage) error
}

// Deliver puts the answer of the ended request r in the agent's inbox (see
// [Message]); it appears in the agent's next prompt. It returns the inbox's
// error, or [ErrInvalid] for a request still pending.
func Deliver(ctx context.Context, to Inbox, r Request) error {
	if !r.Status.Ended() {
		return fmt.Errorf("%w: %s is still pending", ErrInvalid, r.ID)
	}
	return to.DeliverToInbox(ctx, Message(r))
}

func headText(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
