package minds

import (
	"context"
	"fmt"
	"time"

	"github.com/existence-loop/sdk/existence"
	"github.com/existence-loop/sdk/slot"
)

// DefaultTimerImportance is the importance of a [Timer]'s slot when
// TimerConfig.Importance is 0.
const DefaultTimerImportance = 0.2

// TimerConfig configures a [Timer]. Only Every is required.
type TimerConfig struct {
	// Name is the mind's name and its slot's id; default "timer".
	Name string
	// Title is the slot's title; default "Timer".
	Title string
	// Every is the interval between two posts, by the runner's clock.
	Every time.Duration
	// Summary returns the slot's summary at now; default "it is
	// 2026-11-25 14:03 UTC".
	Summary func(now time.Time) string
	// Importance is the slot's importance, 0–1; 0 means 0.2.
	Importance float64
	// Notify posts every slot with notify_user: each tick asks for a
	// cycle (a reminder), within the scheduler's trigger gap and
	// cooldown.
	Notify bool
}

// Timer is a mind that posts a slot at its start and then every interval:
// a clock the agent can read, or with Notify a reminder that wakes it.
// Create it with [NewTimer].
type Timer struct{ cfg TimerConfig }

var _ existence.Mind = (*Timer)(nil)

// NewTimer returns a Timer. Errors: [ErrConfig] for an interval that is
// not positive, an invalid name, an importance out of 0–1.
func NewTimer(cfg TimerConfig) (*Timer, error) {
	if cfg.Every <= 0 {
		return nil, fmt.Errorf("%w: TimerConfig.Every must be positive", ErrConfig)
	}
	cfg.Name = orDefault(cfg.Name, "timer")
	cfg.Title = orDefault(cfg.Title, "Timer")
	cfg.Importance = orDefault(cfg.Importance, DefaultTimerImportance)
	if cfg.Summary == nil {
		cfg.Summary = func(now time.Time) string { return "it is " + stamp(now) }
	}
	if err := checkName(cfg.Name); err != nil {
		return nil, err
	}
	if err := checkImportance(cfg.Importance); err != nil {
		return nil, err
	}
	return &Timer{cfg: cfg}, nil
}

// Name returns the mind's name (TimerConfig.Name).
func (t *Timer) Name() string { return t.cfg.Name }

// Run posts the slot at once and then every interval until ctx ends.
// Errors: the post's.
func (t *Timer) Run(ctx context.Context, env existence.MindEnv) error {
	return every(ctx, env, t.cfg.Every, func(ctx context.Context) error {
		return env.Post(ctx, slot.Slot{ID: t.cfg.Name, Title: t.cfg.Title, Status: slot.Completed, Summary: t.cfg.Summary(clockOf(env).Now()),
			Importance: t.cfg.Importance, Confidence: 1, NextRun: t.cfg.Every.Seconds(), NotifyUser: t.cfg.Notify})
	})
}
