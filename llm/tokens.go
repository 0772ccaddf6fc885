package llm

import (
	"encoding/json"
	"math"
	"sync"

	"github.com/existence-loop/sdk/internal/runes"
)

// Token estimates. A server's tokenizer is not at hand, so prompts are
// measured by an estimate: characters / [CharsPerToken], rounded up, then
// scaled by a ratio learned from the prompt token counts the server
// reports ([TokenEstimator]).
const (
	// CharsPerToken is the uncalibrated estimate: 4 characters (Unicode
	// code points) per token, the usual figure for English text.
	CharsPerToken = 4
	// MessageOverhead is the tokens a chat template adds around each
	// message (role markers, separators), in raw estimate units.
	MessageOverhead = 4
	// calibrationWeight is the weight of a new observation in the
	// exponentially weighted ratio.
	calibrationWeight = 0.2
	// minRatio and maxRatio bound the learned ratio: a server that counts
	// fewer than a quarter or more than four times the raw estimate is
	// more likely misreporting than tokenizing.
	minRatio, maxRatio = 0.25, 4.0
)

// RawTokens is the uncalibrated token estimate of text: its characters
// (Unicode code points) divided by [CharsPerToken], rounded up.
func RawTokens(text string) int { return (runes.Count(text) + CharsPerToken - 1) / CharsPerToken }

// RawRequestTokens is the uncalibrated token estimate of everything a
// request puts in the prompt: every message's content, tool calls and
// name, [MessageOverhead] per message, and the tool definitions as JSON.
// The structured-output schema (Format) is not counted: servers apply it
// as a grammar, not as prompt text.
func RawRequestTokens(req *Request) int {
	if req == nil {
		return 0
	}
	n := 0
	for _, m := range req.Messages {
		n += MessageOverhead + RawTokens(m.Content) + RawTokens(m.Name)
		for _, c := range m.ToolCalls {
			n += RawTokens(c.Name) + (len(c.Arguments)+CharsPerToken-1)/CharsPerToken
		}
	}
	if len(req.Tools) > 0 {
		b, _ := json.Marshal(req.Tools) // ToolDef always marshals
		n += (len(b) + CharsPerToken - 1) / CharsPerToken
	}
	return n
}

// TokenEstimator turns raw estimates into the server's tokens, for one
// server and model. It starts at characters / 4 (a ratio of 1) and learns
// from every prompt token count the server reports for a prompt it did
// not cut: the first observation sets the ratio to reported / raw, and
// each later one moves it a fifth of the way there (an exponentially
// weighted average). The ratio stays within [0.25, 4].
//
// A nil *TokenEstimator is usable and never learns: it estimates
// characters / 4. Methods are safe for concurrent use.
type TokenEstimator struct {
	mu      sync.Mutex
	ratio   float64 // server tokens per raw token; 0 means 1 (uncalibrated)
	samples int
}

// NewTokenEstimator returns an uncalibrated estimator.
func NewTokenEstimator() *TokenEstimator { return &TokenEstimator{} }

// Ratio returns the learned ratio of server tokens to raw estimates (1
// until the first observation) and the number of observations behind it.
func (e *TokenEstimator) Ratio() (ratio float64, samples int) {
	if e == nil {
		return 1, 0
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.samples == 0 {
		return 1, 0
	}
	return e.ratio, e.samples
}

// Scale converts a raw estimate to estimated server tokens, rounding up.
func (e *TokenEstimator) Scale(raw int) int {
	r, _ := e.Ratio()
	return int(math.Ceil(float64(raw) * r))
}

// Tokens estimates the server's tokens for text: [RawTokens] scaled by
// the learned ratio. It has the signature of prompt.Budget's Count.
func (e *TokenEstimator) Tokens(text string) int { return e.Scale(RawTokens(text)) }

// Request estimates the server's prompt tokens for req
// ([RawRequestTokens], scaled).
func (e *TokenEstimator) Request(req *Request) int { return e.Scale(RawRequestTokens(req)) }

// Observe learns from one prompt the server processed whole: raw is the
// request's [RawRequestTokens], reported the prompt tokens the server
// counted. Observations with either count at zero or below are ignored.
// Never feed it a prompt the server cut: its count says nothing about the
// tokenizer.
func (e *TokenEstimator) Observe(raw, reported int) {
	if e == nil || raw <= 0 || reported <= 0 {
		return
	}
	obs := min(max(float64(reported)/float64(raw), minRatio), maxRatio)
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.samples == 0 {
		e.ratio = obs
	} else {
		e.ratio += calibrationWeight * (obs - e.ratio)
	}
	e.samples++
}
