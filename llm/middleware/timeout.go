package middleware

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/existence-loop/sdk/llm"
)

// DefaultTimeout is the per-call timeout of the original system (spec §7):
// 180 s.
const DefaultTimeout = 180 * time.Second

// TimeoutError is returned by [WithTimeout] when its own deadline fired.
// It matches [llm.ErrTimeout] and context.DeadlineExceeded with [errors.Is] and
// unwraps to the error the wrapped model returned.
type TimeoutError struct {
	// Timeout is the per-call limit that was exceeded; 0 when unknown
	// (a deadline a [pool.Pool] saw fire).
	Timeout time.Duration
	// Err is the wrapped model's error (usually wrapping
	// context.DeadlineExceeded).
	Err error
}

// Error reads "llm: call timed out after 3m0s: " and the model's error
// ("llm: call timed out: " when Timeout is 0, unknown).
func (e *TimeoutError) Error() string {
	if e.Timeout <= 0 {
		return fmt.Sprintf("llm: call timed out: %v", e.Err)
	}
	return fmt.Sprintf("llm: call timed out after %s: %v", e.Timeout, e.Err)
}

// Unwrap returns the wrapped model's error.
func (e *TimeoutError) Unwrap() error { return e.Err }

// Is reports whether target is [llm.ErrTimeout] or context.DeadlineExceeded.
func (e *TimeoutError) Is(target error) bool {
	return target == llm.ErrTimeout || target == context.DeadlineExceeded
}

// WithTimeout returns a Model that limits each call of m to d (d <= 0 means
// [DefaultTimeout], 180 s). When that deadline fires, the error is a
// *[TimeoutError], which matches [llm.ErrTimeout] and context.DeadlineExceeded
// and is [Retryable]. When the caller's ctx ends first, the error is the
// caller's: it wraps ctx.Err() and is not an [llm.ErrTimeout].
func WithTimeout(m llm.Model, d time.Duration) llm.Model {
	if d <= 0 {
		d = DefaultTimeout
	}
	return &timeoutModel{next: m, d: d}
}

type timeoutModel struct {
	next llm.Model
	d    time.Duration
}

var _ llm.Model = (*timeoutModel)(nil)

// Unwrap returns the wrapped model ([llm.Unwrapper]).
func (x *timeoutModel) Unwrap() llm.Model { return x.next }

func (t *timeoutModel) Generate(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	cctx, cancel := context.WithTimeoutCause(ctx, t.d, llm.ErrTimeout)
	defer cancel()
	resp, err := t.next.Generate(cctx, req)
	if err == nil {
		return resp, nil
	}
	if ctx.Err() != nil {
		return nil, withContextErr(ctx, err)
	}
	if cctx.Err() != nil {
		return nil, &TimeoutError{Timeout: t.d, Err: err}
	}
	return nil, err
}

// Name returns the wrapped model's name, if it has one.
func (t *timeoutModel) Name() string { return nameOf(t.next) }

var _ llm.Windowed = (*timeoutModel)(nil)

// ContextWindow implements [llm.Windowed]: the wrapped model's window
// ([llm.ContextWindowOf]), its lookup (Ollama's /api/show, say) bounded by
// the same per-call timeout as a call. When that deadline fires, the
// error is a *[TimeoutError].
func (t *timeoutModel) ContextWindow(ctx context.Context) (int, *llm.TokenEstimator, error) {
	cctx, cancel := context.WithTimeoutCause(ctx, t.d, llm.ErrTimeout)
	defer cancel()
	w, est, err := llm.ContextWindowOf(cctx, t.next)
	if err != nil && ctx.Err() == nil && cctx.Err() != nil && !errors.Is(err, llm.ErrTimeout) {
		return 0, nil, &TimeoutError{Timeout: t.d, Err: err}
	}
	return w, est, err
}
