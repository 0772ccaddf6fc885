package middleware

import (
	"context"
	"errors"

	"github.com/existence-loop/sdk/llm"
)

// RepliedTo returns the reply whose tokens a call spent: resp, else the
// partial reply of a [*llm.TruncatedError], else the reply to a prompt the
// server cut ([*llm.ContextLengthError] with Response); nil when the call got
// no reply (a refusal, a 503, a timeout: nothing is known to be spent).
func RepliedTo(resp *llm.Response, err error) *llm.Response {
	if resp != nil {
		return resp
	}
	if te, ok := errors.AsType[*llm.TruncatedError](err); ok && te.Response != nil {
		return te.Response
	}
	if ce, ok := errors.AsType[*llm.ContextLengthError](err); ok && ce.Response != nil {
		return ce.Response
	}
	return nil
}

// UsageOf returns the tokens a call of m with req used, given what it
// returned. Counts come from the reply ([RepliedTo]); a count the server
// left at zero is estimated: the input from req, the output from the
// reply's text, reasoning and tool calls, both with the token estimator
// of m ([llm.ContextWindowOf]; characters / 4 when m has none). A call with no
// reply used nothing as far as anyone knows: zero, not estimated.
func UsageOf(ctx context.Context, m llm.Model, req *llm.Request, resp *llm.Response, err error) llm.Usage {
	r := RepliedTo(resp, err)
	if r == nil {
		return llm.Usage{}
	}
	u := llm.Usage{InputTokens: r.PromptTokens, OutputTokens: r.OutputTokens}
	needIn := u.InputTokens <= 0 && req != nil && len(req.Messages) > 0
	needOut := u.OutputTokens <= 0 && (r.Text != "" || r.Thinking != "" || len(r.ToolCalls) > 0)
	if !needIn && !needOut {
		return u
	}
	var est *llm.TokenEstimator
	if m != nil {
		_, est, _ = llm.ContextWindowOf(ctx, m) // on error, characters / 4
	}
	if needIn {
		u.InputTokens, u.InputEstimated = est.Request(req), true
	}
	if needOut {
		raw := llm.RawTokens(r.Text) + llm.RawTokens(r.Thinking)
		for _, c := range r.ToolCalls {
			raw += llm.RawTokens(c.Name) + (len(c.Arguments)+llm.CharsPerToken-1)/llm.CharsPerToken
		}
		u.OutputTokens, u.OutputEstimated = est.Scale(raw), true
	}
	return u
}

type embedUsageKey struct{}

// WithEmbedUsage returns ctx carrying report, which the [llm.Embedder]
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
