package middleware

import (
	"context"
	"fmt"

	"github.com/existence-loop/sdk/llm"
)

// RepairPromptFormat is the text of the repair follow-up sent by
// [WithRepair]. Its single %s verb is replaced by the validation error,
// verbatim (see [RepairPrompt]).
const RepairPromptFormat = "Your previous reply is not valid: %s\n\n" +
	"Reply again with the corrected JSON object only: no prose, no code fences, no explanation."

// RepairPrompt returns the user message content that [WithRepair] sends
// after a reply fails validation with err: [RepairPromptFormat] quoting
// err.Error() verbatim, JSON Pointer included.
func RepairPrompt(err error) string {
	return fmt.Sprintf(RepairPromptFormat, err)
}

// WithRepair returns a Model that validates structured-output replies and
// gives the model one chance to fix a bad one (repair-and-retry).
//
// It applies only to requests with a non-nil Format whose reply has no tool
// calls; other requests pass through unchanged. When check(resp.Text)
// returns an error, WithRepair sends exactly one follow-up request: the
// original messages, then the bad reply as an assistant message, then a user
// message with [RepairPrompt] of the validation error. If the second reply
// passes check, it is returned with PromptTokens, OutputTokens and Duration
// summed over both calls. Otherwise the error is an *[llm.InvalidOutputError]
// with Repaired set, holding the second reply's text and validation error.
// There is at most one repair per call.
//
// If the follow-up call itself fails, the error wraps both that failure and
// an *InvalidOutputError for the first reply. If ctx has already ended when
// the first reply fails validation, no follow-up is sent. Errors from the
// first call are returned as they are. A nil check returns m unchanged.
//
// check must be safe for concurrent use. To keep what validation parsed,
// use [WithRepairParse].
func WithRepair(m llm.Model, check func(text string) error) llm.Model {
	if check == nil {
		return m
	}
	return &repairModel{next: m, parse: func(text string) (any, error) { return nil, check(text) }}
}

// WithRepairParse is [WithRepair] with a parse function in place of the
// check: a reply is valid when parse returns no error, and the reply
// returned carries parse's value in [llm.Response].Parsed, so the caller uses
// the value validation produced instead of parsing the text again (or
// keeping it aside). parse must be safe for concurrent use; typically it
// is the prompt package's response parser. A nil parse returns m
// unchanged.
func WithRepairParse(m llm.Model, parse func(text string) (any, error)) llm.Model {
	if parse == nil {
		return m
	}
	return &repairModel{next: m, parse: parse}
}

type repairModel struct {
	next  llm.Model
	parse func(string) (any, error)
}

var _ llm.Model = (*repairModel)(nil)

// Unwrap returns the wrapped model ([llm.Unwrapper]).
func (x *repairModel) Unwrap() llm.Model { return x.next }

func (r *repairModel) Generate(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	resp, err := r.next.Generate(ctx, req)
	if err != nil || req.Format == nil || resp == nil || len(resp.ToolCalls) > 0 {
		return resp, err
	}
	parsed, cerr := r.parse(resp.Text)
	if cerr == nil {
		out := *resp
		out.Parsed = parsed
		return &out, nil
	}
	first := &llm.InvalidOutputError{Err: cerr, Text: resp.Text}
	if ctx.Err() != nil {
		return nil, first
	}

	fix := *req
	fix.Messages = make([]llm.Message, 0, len(req.Messages)+2)
	fix.Messages = append(fix.Messages, req.Messages...)
	fix.Messages = append(fix.Messages,
		llm.Message{Role: llm.RoleAssistant, Content: resp.Text},
		llm.Message{Role: llm.RoleUser, Content: RepairPrompt(cerr)},
	)
	resp2, err := r.next.Generate(ctx, &fix)
	if err != nil {
		return nil, fmt.Errorf("llm: repair request failed: %w (after %w)", err, first)
	}
	if resp2 == nil {
		return nil, fmt.Errorf("llm: repair request returned no response (after %w)", first)
	}
	var parsed2 any
	if len(resp2.ToolCalls) == 0 {
		var cerr2 error
		if parsed2, cerr2 = r.parse(resp2.Text); cerr2 != nil {
			return nil, &llm.InvalidOutputError{Err: cerr2, Text: resp2.Text, Repaired: true}
		}
	}
	out := *resp2
	out.Parsed = parsed2
	out.PromptTokens += resp.PromptTokens
	out.OutputTokens += resp.OutputTokens
	out.Duration += resp.Duration
	return &out, nil
}

// Name returns the wrapped model's name, if it has one.
func (r *repairModel) Name() string { return nameOf(r.next) }
