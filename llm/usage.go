package llm

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
