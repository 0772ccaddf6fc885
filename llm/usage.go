package llm

import (
	"context"
	"errors"
)

// Usage is the tokens one model call used: the server's counts where it
// reported them, estimates where it did not. A token budget is spent in
// these units.
type Usage struct {
	// InputTokens are the prompt's tokens (OpenAI's prompt_tokens,
	// Ollama's prompt_eval_count); OutputTokens the generated tokens
	// (completion_tokens, eval_count).
	InputTokens, OutputTokens int
	// InputEstimated and OutputEstimated report that the server gave no
	// count and the figure is an estimate: the request's
	// [RawRequestTokens], or the reply's characters / 4, scaled by the
	// model's calibrated [TokenEstimator].
	InputEstimated, OutputEstimated bool
}

// Total returns InputTokens + OutputTokens.
func (u Usage) Total() int { return u.InputTokens + u.OutputTokens }

// Estimated reports whether either count is an estimate.
func (u Usage) Estimated() bool { return u.InputEstimated || u.OutputEstimated }

// Add returns the sum of u and v; a sum is estimated when either part is.
func (u Usage) Add(v Usage) Usage {
	return Usage{
		InputTokens:     u.InputTokens + v.InputTokens,
		OutputTokens:    u.OutputTokens + v.OutputTokens,
		InputEstimated:  u.InputEstimated || v.InputEstimated,
		OutputEstimated: u.OutputEstimated || v.OutputEstimated,
	}
}

// RepliedTo returns the reply whose tokens a call spent: resp, else the
// partial reply of a [*TruncatedError], else the reply to a prompt the
// server cut ([*ContextLengthError] with Response); nil when the call got
// no reply (a refusal, a 503, a timeout: nothing is known to be spent).
func RepliedTo(resp *Response, err error) *Response {
	if resp != nil {
		return resp
	}
	if te, ok := errors.AsType[*TruncatedError](err); ok && te.Response != nil {
		return te.Response
	}
	if ce, ok := errors.AsType[*ContextLengthError](err); ok && ce.Response != nil {
		return ce.Response
	}
	return nil
}

// UsageOf returns the tokens a call of m with req used, given what it
// returned. Counts come from the reply ([RepliedTo]); a count the server
// left at zero is estimated: the input from req, the output from the
// reply's text, reasoning and tool calls, both with the token estimator
// of m ([ContextWindowOf]; characters / 4 when m has none). A call with no
// reply used nothing as far as anyone knows: zero, not estimated.
func UsageOf(ctx context.Context, m Model, req *Request, resp *Response, err error) Usage {
	r := RepliedTo(resp, err)
	if r == nil {
		return Usage{}
	}
	u := Usage{InputTokens: r.PromptTokens, OutputTokens: r.OutputTokens}
	needIn := u.InputTokens <= 0 && req != nil && len(req.Messages) > 0
	needOut := u.OutputTokens <= 0 && (r.Text != "" || r.Thinking != "" || len(r.ToolCalls) > 0)
	if !needIn && !needOut {
		return u
	}
	var est *TokenEstimator
	if m != nil {
		_, est, _ = ContextWindowOf(ctx, m) // on error, characters / 4
	}
	if needIn {
		u.InputTokens, u.InputEstimated = est.Request(req), true
	}
	if needOut {
		raw := RawTokens(r.Text) + RawTokens(r.Thinking)
		for _, c := range r.ToolCalls {
			raw += RawTokens(c.Name) + (len(c.Arguments)+CharsPerToken-1)/CharsPerToken
		}
		u.OutputTokens, u.OutputEstimated = est.Scale(raw), true
	}
	return u
}

type embedUsageKey struct{}

// WithEmbedUsage returns ctx carrying report, which the [Embedder]
// adapters of llm/ollama and llm/openai call, through [ReportEmbedUsage],
// with the input tokens the server counted for each embedding request
// made with ctx (Ollama's prompt_eval_count, OpenAI's
// usage.prompt_tokens); a server that reports none is not called for.
// This is how an agent charges the embeddings it causes (its recalls and
// remembers) to its token budget. report must be safe for concurrent use.
func WithEmbedUsage(ctx context.Context, report func(tokens int)) context.Context {
	return context.WithValue(ctx, embedUsageKey{}, report)
}

// ReportEmbedUsage passes tokens (when positive) to the report function
// of ctx ([WithEmbedUsage]), if any. Third-party Embedder adapters call it
// once per request with the server's count.
func ReportEmbedUsage(ctx context.Context, tokens int) {
	if report, ok := ctx.Value(embedUsageKey{}).(func(int)); ok && report != nil && tokens > 0 {
		report(tokens)
	}
}
