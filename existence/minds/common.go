package minds

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/existence-loop/sdk/clock"
	"github.com/existence-loop/sdk/existence"
	"github.com/existence-loop/sdk/slot"
)

// ErrConfig matches (errors.Is) the errors of the constructors for a
// configuration that cannot work.
var ErrConfig = fmt.Errorf("minds: bad configuration")

// checkName checks a mind's name: a valid slot id.
func checkName(name string) error {
	if err := (slot.Slot{ID: name, Status: slot.Idle}).Validate(); err != nil {
		return fmt.Errorf("%w: the name must be a valid slot id: %w", ErrConfig, err)
	}
	return nil
}

// orDefault returns v, or def when v is 0.
func orDefault[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

// checkImportance checks an importance given in a configuration.
func checkImportance(v float64) error {
	if v < 0 || v > 1 || v != v {
		return fmt.Errorf("%w: Importance is %v; want 0 to 1 (0: the mind's default)", ErrConfig, v)
	}
	return nil
}

// every runs round at once and then every interval by env's clock, until
// ctx ends (nil) or a round fails (its error).
func every(ctx context.Context, env existence.MindEnv, interval time.Duration, round func(ctx context.Context) error) error {
	// The ticker starts before the first round: a manual clock advanced
	// once that round is seen must find it.
	ticks, stop := clockOf(env).NewTicker(interval)
	defer stop()
	if err := round(ctx); err != nil {
		return err
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-ticks:
			if err := round(ctx); err != nil {
				return err
			}
		}
	}
}

// clockOf returns env's clock, or the system clock.
func clockOf(env existence.MindEnv) clock.Clock {
	if env.Clock == nil {
		return clock.System
	}
	return env.Clock
}

// stamp formats a time for a summary: "2026-11-25 14:03 UTC".
func stamp(t time.Time) string { return t.UTC().Format("2006-01-02 15:04 UTC") }

// size formats a byte count with thousands separators: "12,345 bytes".
func size(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	if n == 1 {
		return s + " byte"
	}
	return s + " bytes"
}

// oneLine puts s on one line and cuts it to n characters, ending in "…"
// when cut.
func oneLine(s string, n int) string {
	s = strings.Join(strings.FieldsFunc(s, unicode.IsSpace), " ")
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return strings.TrimRightFunc(string(r[:n-1]), unicode.IsSpace) + "…"
}
