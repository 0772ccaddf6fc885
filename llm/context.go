package llm

import (
	"context"
	"errors"
	"fmt"
)

// ErrContextLength: a prompt did not fit the model's context window. The
// server refused it, the adapter refused to send it, or the server cut it
// silently and the adapter noticed. See [ContextLengthError].
var ErrContextLength = errors.New("llm: prompt exceeds the context window")

// ContextLengthError reports a prompt that did not fit the context window.
// It matches [ErrContextLength]. Retrying the same request cannot help:
// the caller shrinks the prompt (the existence cycle fits its prompt
// budget to Window; the tool loop compacts its history) and tries again.
type ContextLengthError struct {
	// Provider names the adapter ("ollama", "openai").
	Provider string
	// Model is the model the request was for.
	Model string
	// Window is the context window in tokens the prompt must fit: the
	// limit the server stated, the window it was seen to grant, or the
	// operator's ceiling; 0 when unknown.
	Window int
	// Prompt is the prompt's size in tokens: the server's count when it
	// gave one, else the adapter's estimate.
	Prompt int
	// Reserve is, for a prompt refused before it was sent (on the
	// adapter's estimate), the tokens kept for the reply with it; 0
	// otherwise. The estimate missed the window by Prompt + Reserve -
	// Window tokens.
	Reserve int
	// Kept is, for a prompt the server cut silently (HTTP 200), the tokens
	// it kept (Ollama's prompt_eval_count); 0 when the prompt was refused.
	Kept int
	// Message is the server's error message, when it refused the prompt.
	Message string
	// Response is the reply to a prompt the server cut, whose tokens were
	// spent; nil when the prompt was refused. It answers a prompt that
	// lost its beginning: don't use it as if it answered the request.
	Response *Response
}

// Error says which prompt did not fit which window, or how far the server
// cut it: "ollama: model \"m\": the server cut the prompt from about N to K
// tokens (its context window)".
func (e *ContextLengthError) Error() string {
	var s string
	switch {
	case e.Kept > 0:
		s = fmt.Sprintf("%s: model %q: the server cut the prompt from about %d to %d tokens (its context window)", e.Provider, e.Model, e.Prompt, e.Kept)
	case e.Window > 0 && e.Prompt > 0 && e.Reserve > 0:
		s = fmt.Sprintf("%s: model %q: a prompt of about %d tokens and its reply's reserve of %d do not fit the context window of %d tokens (about %d over, by the estimate; not sent)",
			e.Provider, e.Model, e.Prompt, e.Reserve, e.Window, e.Prompt+e.Reserve-e.Window)
	case e.Window > 0 && e.Prompt > 0:
		s = fmt.Sprintf("%s: model %q: a prompt of about %d tokens does not fit the context window of %d tokens", e.Provider, e.Model, e.Prompt, e.Window)
	default:
		s = fmt.Sprintf("%s: model %q: the prompt does not fit the context window", e.Provider, e.Model)
	}
	if e.Message != "" {
		s += ": " + e.Message
	}
	return s
}

// Is reports whether target is [ErrContextLength].
func (e *ContextLengthError) Is(target error) bool { return target == ErrContextLength }

// Windowed is implemented by models that know the context window they are
// served with: the Ollama and OpenAI-compatible adapters and llmtest's
// stand-in servers' clients. Middleware passes it through ([Unwrapper]);
// use [ContextWindowOf] rather than a type assertion.
type Windowed interface {
	// ContextWindow returns the context window in tokens that a prompt
	// and its reply must fit together (what the server grants, as far as
	// the model knows; 0 when unknown) and the model's calibrated token
	// estimator. The first call may ask the server (Ollama's /api/show);
	// its errors are the adapter's classified errors.
	ContextWindow(ctx context.Context) (tokens int, est *TokenEstimator, err error)
}

// Unwrapper is implemented by middleware: Unwrap returns the model it
// wraps, so that [ContextWindowOf] finds the adapter below.
type Unwrapper interface {
	Unwrap() Model
}

// ContextWindowOf returns the context window of m in tokens and its token
// estimator, looking through middleware ([Unwrapper]) for a [Windowed]
// model. It returns 0 and an uncalibrated estimator (nil, which estimates
// characters / 4) when no model in the chain knows its window.
func ContextWindowOf(ctx context.Context, m Model) (tokens int, est *TokenEstimator, err error) {
	for range 32 { // middleware chains are short; a cycle must not hang
		if w, ok := m.(Windowed); ok {
			return w.ContextWindow(ctx)
		}
		u, ok := m.(Unwrapper)
		if !ok {
			return 0, nil, nil
		}
		m = u.Unwrap()
	}
	return 0, nil, nil
}
