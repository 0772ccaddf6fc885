package middleware

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/existence-loop/sdk/llm"
)

// FallbackError is returned by [Fallback] when every model failed. Errs
// holds one error per model tried, in order; the last is the final model's.
// It unwraps to all of them (like [errors.Join]), so [errors.Is] and
// [errors.As] match any model's error, while [Classify] and [Retryable]
// judge the last one.
type FallbackError struct {
	Errs []error
}

// Error reads "llm: all N models failed", then each model's error on a line
// of its own, in the order tried.
func (e *FallbackError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "llm: all %d models failed", len(e.Errs))
	for _, err := range e.Errs {
		b.WriteString("\n")
		b.WriteString(err.Error())
	}
	return b.String()
}

// Unwrap returns the errors of all models tried, in order.
func (e *FallbackError) Unwrap() []error { return e.Errs }

// Fallback returns a Model that tries each model in order and returns the
// first success. The original system tried a hosted model first and a local
// Ollama model second; with this SDK that is
//
//	Fallback(hosted, local)
//
// If a model fails, the next one is tried, whatever the error, unless the
// caller's ctx has ended: then Fallback returns at once with that model's
// error. If every model fails, the error is a *[FallbackError] holding each
// model's error, labelled with its name or position. Fallback with no
// models returns an error on every call. Wrap each model in [WithRetry]
// first if it should be retried before falling through.
func Fallback(models ...llm.Model) llm.Model {
	return &fallbackModel{models: append([]llm.Model(nil), models...)}
}

type fallbackModel struct {
	models []llm.Model
}

var _ llm.Model = (*fallbackModel)(nil)

// ContextWindow implements [llm.Windowed]: the smallest window of the models
// that know theirs, with the first such model's estimator; 0 when none
// knows.
func (f *fallbackModel) ContextWindow(ctx context.Context) (int, *llm.TokenEstimator, error) {
	var (
		win int
		est *llm.TokenEstimator
	)
	for _, m := range f.models {
		w, e, err := llm.ContextWindowOf(ctx, m)
		if err != nil {
			return 0, nil, err
		}
		if w > 0 && (win == 0 || w < win) {
			win = w
		}
		if est == nil {
			est = e
		}
	}
	return win, est, nil
}

func (f *fallbackModel) Generate(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	if len(f.models) == 0 {
		return nil, errors.New("llm: Fallback has no models")
	}
	errs := make([]error, 0, len(f.models))
	for i, m := range f.models {
		resp, err := m.Generate(ctx, req)
		if err == nil {
			return resp, nil
		}
		if ctx.Err() != nil && len(errs) == 0 {
			return nil, withContextErr(ctx, err)
		}
		name := nameOf(m)
		if name == "" {
			name = fmt.Sprintf("model %d", i+1)
		}
		if ctx.Err() != nil {
			errs = append(errs, fmt.Errorf("%s: %w", name, withContextErr(ctx, err)))
			break
		}
		errs = append(errs, fmt.Errorf("%s: %w", name, err))
	}
	return nil, &FallbackError{Errs: errs}
}

// Name returns the first model's name, if it has one.
func (f *fallbackModel) Name() string {
	if len(f.models) == 0 {
		return ""
	}
	return nameOf(f.models[0])
}

// nameOf returns m's name when m has a Name() string method (the adapters
// and this package's middleware do), else "".
func nameOf(m llm.Model) string {
	if n, ok := m.(interface{ Name() string }); ok {
		return n.Name()
	}
	return ""
}
