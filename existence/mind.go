package existence

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/existence-loop/sdk/clock"
	"github.com/existence-loop/sdk/existence/event"
	"github.com/existence-loop/sdk/existence/internal/wire"
	"github.com/existence-loop/sdk/internal/backoff"
	"github.com/existence-loop/sdk/llm"
	"github.com/existence-loop/sdk/slot"
)

// Mind is a background job that watches part of the world and reports
// what it finds as slot updates: GLaDOS's minds (its subagents),
// each on its own schedule. existence/minds has built-ins: a workspace
// watcher, an HTTP poller, an RSS and Atom feed reader, a timer and an MCP
// resource subscription.
//
// A mind belongs to an agent ([Config].Minds: it posts to the agent's own
// board) or to a runner (runner.Config.Minds: it posts to the shared
// board). It runs while the agent or the runner runs in real time
// ([Agent.Run], [runner.Runner.Run]); under [runner.Runner.RunVirtual] minds do not run
// (existence/simulate scripts the world's slot updates instead).
type Mind interface {
	// Name names the mind in events, and is the id of the failed slot
	// posted for it: a valid slot id (1–128 characters, no whitespace or
	// control characters), e.g. "workspace" or "feed:news". Names must be
	// unique among the minds that post to one board.
	Name() string
	// Run watches until ctx ends, posting slot updates with env.Post, and
	// returns ctx's error (or nil) then. It may return nil earlier when
	// it has nothing more to watch: it is not run again. Any other error
	// is a failure: the runner reports it ([event.MindFailed]), posts a
	// slot with the mind's name and status failed, and calls Run again
	// after a backoff (1 s, doubling to 5 minutes; back to 1 s once a run
	// has posted a slot). A panic in Run is a failure too. A mind that
	// calls a model does so through env.Lane, never directly.
	Run(ctx context.Context, env MindEnv) error
}

// MindEnv is what a [Mind] gets to work with.
type MindEnv struct {
	// Post puts a slot on the mind's board: [Agent.PostSlot] for an
	// agent's mind, [runner.Runner.PostSharedSlot] for a runner's. Errors:
	// slot.ErrInvalid, the board's.
	Post func(ctx context.Context, s slot.Slot) error
	// Lane wraps a model so that each call holds a worker of the runner's
	// autonomy lane (runner.Config.AutonomyWorkers), queued behind the
	// cycles already due and never on the priority lane: a mind's model
	// calls share the capacity of the model server with the agents'
	// ordinary cycles and never delay an answer to a person.
	Lane func(m llm.Model) llm.Model
	// Clock is the runner's clock, for schedules and timestamps.
	Clock clock.Clock
	// Logger receives the mind's diagnostics, with its name attached.
	Logger *slog.Logger
}

// Backoff of a failing mind (see [Mind]).
const (
	// mindMinBackoff is the wait after a mind's first failure in a row.
	mindMinBackoff = time.Second
	// mindMaxBackoff caps the wait, which doubles with each failure in a
	// row.
	mindMaxBackoff = 5 * time.Minute
)

// checkMinds checks that every mind has a valid, unique name.
func checkMinds(ms []Mind) error {
	seen := map[string]bool{}
	for i, m := range ms {
		if m == nil {
			return fmt.Errorf("existence: mind %d is nil", i)
		}
		name := m.Name()
		if err := (slot.Slot{ID: name, Status: slot.Idle}).Validate(); err != nil {
			return fmt.Errorf("existence: mind %d: its name must be a valid slot id: %w", i, err)
		}
		if seen[name] {
			return fmt.Errorf("existence: two minds are named %q", name)
		}
		seen[name] = true
	}
	return nil
}

// superviseMind supervises one mind on a goroutine of h.Group: it runs
// it, and after a failure reports it, posts a failed slot and runs it
// again after a backoff, until ctx ends or Run returns nil.
func superviseMind(h wire.MindHost, ctx context.Context, m Mind, post func(context.Context, slot.Slot) error, report func(event.Event)) {
	name := m.Name()
	log := h.Logger.With("mind", name)
	h.Group.Go(func() {
		delay := mindMinBackoff
		for {
			var posted atomic.Bool
			env := MindEnv{
				Post: func(ctx context.Context, s slot.Slot) error {
					err := post(ctx, s)
					if err == nil {
						posted.Store(true)
					}
					return err
				},
				Lane:   h.Lane,
				Clock:  h.Clock,
				Logger: log,
			}
			err := runOnce(ctx, m, env)
			if ctx.Err() != nil {
				return
			}
			if err == nil {
				log.Info("mind finished")
				return
			}
			if posted.Load() {
				delay = mindMinBackoff
			}
			failed := slot.Slot{ID: name, Title: name, Status: slot.Failed, Summary: err.Error(),
				Importance: 0.5, NextRun: delay.Seconds()}
			if perr := post(ctx, failed); perr != nil && ctx.Err() == nil {
				report(event.Event{Kind: event.Error, Text: "posting the failed slot of mind " + name, Err: perr})
			}
			failed = failed.Clean()
			report(event.Event{Kind: event.MindFailed, Slot: &failed, Err: err,
				Text: fmt.Sprintf("mind %s failed; it runs again in %s", name, delay)})
			log.Warn("mind failed", "err", err, "retry_in", delay)
			wait := make(chan struct{})
			stop := h.Clock.AfterFunc(delay, func() { close(wait) })
			select {
			case <-ctx.Done():
				stop()
				return
			case <-wait:
			}
			delay = backoff.Next(delay, mindMinBackoff, mindMaxBackoff)
		}
	})
}

// runOnce runs m once, turning a panic into an error.
func runOnce(ctx context.Context, m Mind, env MindEnv) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("mind %s panicked: %v", m.Name(), p)
		}
	}()
	err = m.Run(ctx, env)
	if errors.Is(err, context.Canceled) && ctx.Err() != nil {
		return nil
	}
	return err
}
