package existence

import (
	"context"
	"log/slog"
	"time"

	"github.com/existence-loop/sdk/clock"
	"github.com/existence-loop/sdk/existence/event"
	"github.com/existence-loop/sdk/existence/internal/wire"
	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/lease"
	"github.com/existence-loop/sdk/slot"
	"github.com/existence-loop/sdk/suffering"
)

// adapter is an *Agent as a runner sees it ([wire.Agent]): the runner
// reaches the agent's locks, state and lifecycle only through it.
type adapter struct{ a *Agent }

var _ wire.Agent = adapter{}

func (x adapter) ID() string                         { return x.a.ID() }
func (x adapter) Name() string                       { return x.a.Name() }
func (x adapter) Heartbeat() time.Duration           { return x.a.cfg.Timing.Heartbeat }
func (x adapter) Clock() clock.Clock                 { return x.a.cfg.Timing.Clock }
func (x adapter) Log() *slog.Logger                  { return x.a.log }
func (x adapter) Tick(ctx context.Context) error     { return x.a.Tick(ctx) }
func (x adapter) WaitGoal(ctx context.Context) error { return x.a.WaitGoal(ctx) }
func (x adapter) StoppedErr() error                  { return x.a.stoppedErr() }
func (x adapter) Stop() error                        { return x.a.stop() }
func (x adapter) Release() error                     { return x.a.release() }
func (x adapter) Abandon()                           { x.a.abandon() }
func (x adapter) Close() error                       { return x.a.Close() }
func (x adapter) Emit(e event.Event)                 { x.a.emit(e) }
func (x adapter) Unwrap() any                        { return x.a }

func (x adapter) BudgetHold(lane wire.Lane, now time.Time) time.Time {
	return x.a.budgetHold(lane, now)
}

func (x adapter) Lease() (lease.Lease, bool) { return x.a.Lease() }

func (x adapter) DeliverToInbox(ctx context.Context, m identity.AgentMessage) error {
	return x.a.DeliverToInbox(ctx, m)
}

func (x adapter) SayAsHost(ctx context.Context, text string) error { return x.a.SayAsHost(ctx, text) }

// Peek reads the agent's name, narrative, crisis and pending host message
// under its lock.
func (x adapter) Peek() wire.Peek {
	a := x.a
	a.mu.Lock()
	defer a.mu.Unlock()
	return wire.Peek{
		Name:      a.state.Identity.Name,
		Narrative: a.state.Identity.Narrative,
		Crisis:    suffering.LevelOf(a.state.Suffering.Load()) == suffering.LevelCrisis,
		Host:      len(a.state.Host) > a.hostSeen,
	}
}

// Reached reports whether the agent ran its MaxCycles with its last goal
// ended, or the channel of the goal still running after them.
func (x adapter) Reached() (done bool, goal <-chan struct{}) {
	a := x.a
	a.mu.Lock()
	defer a.mu.Unlock()
	reached := a.cfg.Timing.MaxCycles > 0 && a.cycles >= a.cfg.Timing.MaxCycles
	done = reached && a.state.Identity.ActiveGoal() == nil
	if r := a.running.Load(); reached && !done && r != nil {
		goal = r.done
	}
	return done, goal
}

// Minds returns how many minds the agent has.
func (x adapter) Minds() int { return len(x.a.cfg.Minds) }

// StartMinds starts the agent's minds under h: they post to its own board.
func (x adapter) StartMinds(ctx context.Context, h wire.MindHost) {
	for _, m := range x.a.cfg.Minds {
		superviseMind(h, ctx, m, x.a.PostSlot, x.a.emit)
	}
}

// SetHooks installs the runner's wake and trigger hooks; nil removes them.
func (x adapter) SetHooks(wake, trigger func()) {
	if wake == nil {
		x.a.wakeHook.Store(nil)
	} else {
		x.a.wakeHook.Store(&wake)
	}
	if trigger == nil {
		x.a.triggerHook.Store(nil)
	} else {
		x.a.triggerHook.Store(&trigger)
	}
}

// NotifyShared asks for a cycle now when the agent sees board b.
func (x adapter) NotifyShared(b *identity.SharedBoard) {
	if x.a.cfg.Memory.SharedSlots == b {
		x.a.notifyCycle()
	}
}

func init() {
	wire.NewAgent = func(ctx context.Context, cfg any, h wire.Hooks) (wire.Agent, error) {
		a, err := newAgent(ctx, cfg.(Config), h)
		if err != nil {
			return nil, err
		}
		return adapter{a}, nil
	}
	wire.CheckMinds = func(minds any) error { return checkMinds(minds.([]Mind)) }
	wire.SuperviseMinds = func(ctx context.Context, h wire.MindHost, minds any, post func(context.Context, slot.Slot) error, report func(event.Event)) {
		for _, m := range minds.([]Mind) {
			superviseMind(h, ctx, m, post, report)
		}
	}
}
