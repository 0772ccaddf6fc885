package wire

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/existence-loop/sdk/clock"
	"github.com/existence-loop/sdk/existence/event"
	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/lease"
	"github.com/existence-loop/sdk/llm"
	"github.com/existence-loop/sdk/llm/middleware"
	"github.com/existence-loop/sdk/prompt"
	"github.com/existence-loop/sdk/slot"
)

// Agent is what a runner needs of an agent it runs. Every method is safe
// for concurrent use.
type Agent interface {
	// ID and Name are the agent's id and display name.
	ID() string
	Name() string
	// Heartbeat and Clock are the agent's (Config.Heartbeat, Config.Clock).
	Heartbeat() time.Duration
	Clock() clock.Clock
	// Log is the agent's logger, with its id attached.
	Log() *slog.Logger
	// Tick runs one tick (Agent.Tick); WaitGoal waits for the goal's
	// executor (Agent.WaitGoal).
	Tick(ctx context.Context) error
	WaitGoal(ctx context.Context) error
	// Peek returns what the runner's peer snapshot and lane hints need
	// after a cycle.
	Peek() Peek
	// Reached reports whether the agent ran its MaxCycles and its last
	// goal ended (done), or, when only the goal is left, the channel
	// closed when the goal's executor returns (goal).
	Reached() (done bool, goal <-chan struct{})
	// StoppedErr returns the error that stops the agent (Config.FailFast),
	// or nil.
	StoppedErr() error
	// Stop cancels the goal and saves; Release releases the store lock;
	// Abandon stops the agent without a save (its lease was lost); Close
	// is Stop and Release.
	Stop() error
	Release() error
	Abandon()
	Close() error
	// Emit reports an event as the agent's own.
	Emit(e event.Event)
	// BudgetHold returns when a cycle of the lane may start by the
	// agent's budgets, if later than now; zero means now.
	BudgetHold(lane Lane, now time.Time) time.Time
	// Lease returns the lease the agent runs under, if any.
	Lease() (lease.Lease, bool)
	// DeliverToInbox and SayAsHost are the agent's (Agent.DeliverToInbox,
	// Agent.SayAsHost).
	DeliverToInbox(ctx context.Context, m identity.AgentMessage) error
	SayAsHost(ctx context.Context, text string) error
	// SetHooks installs what asks the runner for a priority cycle (wake)
	// and for a cycle now (trigger); nil removes them.
	SetHooks(wake, trigger func())
	// NotifyShared asks for a cycle now when the agent sees board b (a
	// notifying slot of the shared board).
	NotifyShared(b *identity.SharedBoard)
	// Minds returns how many minds the agent has (Config.Minds);
	// StartMinds starts them under h until ctx ends.
	Minds() int
	StartMinds(ctx context.Context, h MindHost)
	// Unwrap returns the *existence.Agent.
	Unwrap() any
}

// Peek is what a runner reads of an agent after a cycle.
type Peek struct {
	Name, Narrative string
	// Crisis: the agent's load is at the crisis level (≥ 0.90).
	Crisis bool
	// Host: an unread host message is pending.
	Host bool
}

// Lane is a scheduler lane as the agent sees it: autonomy or priority.
type Lane uint8

// The lanes.
const (
	LaneAutonomy Lane = iota
	LanePriority
)

// String returns "autonomy" or "priority".
func (l Lane) String() string {
	if l == LanePriority {
		return "priority"
	}
	return "autonomy"
}

// Hooks is what a runner gives an agent it runs, apart from its Config:
// the runner's services, which an agent made with existence.New has none
// of. Every field may be zero.
type Hooks struct {
	// Peers returns the agent's "YOUR PEERS" section and how many others
	// are not shown.
	Peers func(self string) ([]prompt.Peer, int)
	// Send delivers a crisis message from the agent to the peers shown.
	Send func(from Agent, text string)
	// Limiter bounds the calls made outside the lanes.
	Limiter *middleware.Limiter
	// Lanes: cycles run in the runner's lanes, not under Limiter.
	Lanes bool
	// Lease is the lease the agent runs under, with Leases.
	Lease *lease.Lease
	// Shared is the runner-wide budget, nil for none.
	Shared *BudgetState
	// Meter is the runner's latency meter.
	Meter func(m llm.Model, now func() time.Time) llm.Model
	// Observer receives the agent's events after its own Observer (the
	// runner's subscribers).
	Observer event.Observer
}

// Dispatch is a cycle the scheduler handed to a worker, as the agent sees
// it in the cycle's context.
type Dispatch struct {
	Lane      Lane
	Lateness  time.Duration
	Coalesced int
}

type dispatchKey struct{}

// WithDispatch returns ctx carrying d.
func WithDispatch(ctx context.Context, d *Dispatch) context.Context {
	return context.WithValue(ctx, dispatchKey{}, d)
}

// DispatchFrom returns the dispatch of the cycle ctx runs, or nil outside
// the scheduler.
func DispatchFrom(ctx context.Context) *Dispatch {
	d, _ := ctx.Value(dispatchKey{}).(*Dispatch)
	return d
}

// MindHost is what a runner gives the minds it supervises (see
// existence.Mind): the group their goroutines join, the model wrapper
// that puts a call on the autonomy lane, the runner's clock and logger.
type MindHost struct {
	Group  *sync.WaitGroup
	Lane   func(m llm.Model) llm.Model
	Clock  clock.Clock
	Logger *slog.Logger
}

// DefaultHeartbeat is an agent's default tick interval (spec §1):
// existence.DefaultHeartbeat.
const DefaultHeartbeat = 6 * time.Second

// Set by package existence in an init, for the runner, which may import
// existence but not its unexported functions. The arguments typed any are
// an existence.Config (NewAgent) and an []existence.Mind (CheckMinds,
// SuperviseMinds): wire cannot name existence's types, which import it.
var (
	// NewAgent is existence.New with the runner's hooks h; the agent
	// returned unwraps to an *existence.Agent.
	NewAgent func(ctx context.Context, cfg any, h Hooks) (Agent, error)
	// CheckMinds checks that every mind has a valid, unique name.
	CheckMinds func(minds any) error
	// SuperviseMinds runs each mind under h until ctx ends, posting with
	// post and reporting failures with report (see existence.Mind).
	SuperviseMinds func(ctx context.Context, h MindHost, minds any, post func(context.Context, slot.Slot) error, report func(event.Event))
)
