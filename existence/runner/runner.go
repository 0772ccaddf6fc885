package runner

import (
	"context"
	"log/slog"
	"time"

	"github.com/existence-loop/sdk/clock"
	"github.com/existence-loop/sdk/existence"
	"github.com/existence-loop/sdk/existence/budget"
	"github.com/existence-loop/sdk/existence/event"
	"github.com/existence-loop/sdk/existence/internal/sched"
	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/lease"
	"github.com/existence-loop/sdk/llm/middleware"
	"go.opentelemetry.io/otel/trace"
)

// Defaults of [Config]: the peers section and the leases.
const (
	// DefaultMaxPeersShown is how many peers a "YOUR PEERS" section shows
	// at most.
	DefaultMaxPeersShown = sched.DefaultMaxPeersShown
	// DefaultRenewEvery is how often a runner with Leases renews them and
	// claims more: a third of a 15 s lease TTL.
	DefaultRenewEvery = sched.DefaultRenewEvery
)

// DefaultTriggerGap returns the default trigger gap of an agent of the
// given heartbeat ([Config].TriggerGap): a quarter of the heartbeat (15 s
// for 60 s).
func DefaultTriggerGap(heartbeat time.Duration) time.Duration {
	return sched.DefaultTriggerGap(heartbeat)
}

// Errors of a [Runner].
var (
	// ErrDuplicateAgent is wrapped by the error of [Runner.Add] given an
	// id the runner already holds.
	ErrDuplicateAgent = sched.ErrDuplicateAgent
	// ErrNotVirtual is returned by [Runner.RunVirtual] when the runner's
	// Clock is not a [*clock.Virtual].
	ErrNotVirtual = sched.ErrNotVirtual
	// ErrNoSharedBoard is returned by [Runner.PostSharedSlot] and
	// [Runner.RemoveSharedSlot] when the runner has no shared board
	// (Config.Memory.SharedSlots).
	ErrNoSharedBoard = sched.ErrNoSharedBoard
)

// AdaptiveWorkers, as [Config].AutonomyWorkers, sizes the autonomy
// lane by a [middleware.AdaptiveLimit] that measures every model call the
// runner's agents make: the lane grows while the server's latency stays
// near its minimum and shrinks when it climbs (a queue forms) or the
// server answers 503, 429 or "busy". The priority lane has a reserved
// share of the limit (max(PriorityWorkers, ⌈limit/4⌉) calls) that autonomy
// cycles never take, and may grow to the whole limit, its cycles beyond
// the share taking autonomy workers as they free up: a host message never
// waits behind autonomy work in the runner, nor behind another host
// message, and the short queue the limit keeps at the server leaves it
// room there. Its calls are marked [middleware.WithPriority], so that a 503 is
// retried after a short wait.
const AdaptiveWorkers = sched.AdaptiveWorkers

// Lane is one of the scheduler's two bounded worker pools (after GLaDOS's
// GLaDOS design): a [Runner] queues each agent's due cycle in one of them,
// and a cycle runs only on a free worker of its lane.
type Lane uint8

const (
	// LaneAutonomy runs ordinary existence cycles, the ones heartbeats
	// bring due. Its size is [Config].AutonomyWorkers (default 1).
	LaneAutonomy Lane = iota
	// LanePriority runs the cycles that answer someone: a host message
	// ([existence.Agent.SayAsHost], [Runner.SayAsHost]), an assigned task announced with
	// [Runner.Wake], and the cycles of an agent in crisis (load ≥ 0.90).
	// Autonomy work never delays it. Its size is
	// [Config].PriorityWorkers (default 1); under [AdaptiveWorkers]
	// it has a reserved share of the limit and grows to the whole limit.
	LanePriority
)

// String returns "autonomy" or "priority".
func (l Lane) String() string {
	if l == LanePriority {
		return "priority"
	}
	return "autonomy"
}

// Config configures a [Runner]. Inheritance follows one rule: a
// zero field of an added agent's [existence.Config] takes the runner's value of the
// field of the same name, at the top of Config or in one of its groups
// (a zero field inside a group counts, not the group as a whole). The
// fields inherited so are Store, Timing.Clock, Timing.Heartbeat, Observer,
// Logger, Memory.SharedSlots, Calls.Budget, TracerProvider and
// TraceContent (a false TraceContent takes the runner's). A field set in
// the agent's Config wins. The runner's subscribers ([Runner.Subscribe])
// receive every agent's events besides its own Observer: that is the
// runner's wiring, not inheritance.
type Config struct {
	// Store is shared by the agents (required unless every agent's Config
	// sets its own, as a Leases NewAgent does). With an
	// filestore.Store each agent holds its own lock for the whole run.
	Store identity.Store
	// AutonomyWorkers is the size of the autonomy lane: how many ordinary
	// existence cycles (and so model calls) run at once; 0 means 1, which
	// suits one local GPU (the existence command's -autonomy-workers 0 means
	// adaptive instead); any number is allowed. With a model of latency L and a heartbeat H, N agents need
	// about N·L/H workers to keep up. [AdaptiveWorkers] lets the lane find
	// the model server's capacity itself (see Adaptive).
	AutonomyWorkers int
	// Adaptive bounds the autonomy lane's size under [AdaptiveWorkers]
	// (a [middleware.AdaptiveLimit]: from Min to Max, starting at Initial;
	// defaults 1, 256, 1); ignored otherwise. Its OnChange is the
	// runner's own (it resizes the lane); one set here is not called.
	Adaptive middleware.AdaptiveConfig
	// PriorityWorkers is the size of the priority lane, which runs the
	// cycles answering host messages, assigned tasks announced with
	// [Runner.Wake], and crisis cycles, ahead of all autonomy work;
	// default 1. Under [AdaptiveWorkers] it is the least of the priority
	// lane's reserved share of the limit, which is max(PriorityWorkers,
	// ⌈limit/4⌉), and the lane grows to the whole limit when cycles wait
	// in it (see [AdaptiveWorkers]).
	PriorityWorkers int
	// Cooldown is the minimum gap between the end of an agent's cycle and
	// the start of its next autonomy cycle; default 0, the original's
	// behaviour (GLaDOS uses 20 s). Priority cycles ignore it.
	Cooldown time.Duration
	// TriggerGap is the least time between the end of an agent's cycle
	// and the start of an autonomy cycle that a trigger asks for (a slot
	// posted with notify_user, see [existence.Agent.PostSlot]); triggers arriving
	// meanwhile are merged into that one cycle, so that a burst of
	// notifying slots costs at most two cycles (the one it starts and one
	// after it) however fast the model is, and a flood of them at most
	// one cycle per TriggerGap. The Cooldown applies too when longer.
	// Default a quarter of each agent's heartbeat ([DefaultTriggerGap]:
	// 15 s at 60 s); negative: no gap.
	TriggerGap time.Duration
	// NoStagger starts every agent's first heartbeat at once instead of
	// spreading the agents over one heartbeat (by a hash of their ids).
	NoStagger bool
	// MaxPeersShown bounds the "YOUR PEERS" section; default 8. Which
	// peers are shown is described at [Runner].
	MaxPeersShown int
	// SharedPeers starts every agent's rotation through its peers at the
	// same place, moving on by MaxPeersShown once a sweep (as many ended
	// cycles, of any agents, as the runner holds agents), instead of
	// after the agent itself with its own cycle count: agents whose
	// prompts one KV-cache slot interleaves then show the same peers,
	// which [prompt.LayoutCache] puts before what each agent gathers, but
	// for an agent among them (it skips itself) and the agents that
	// messaged or are in crisis, which still come first. The names,
	// narratives and crises shown are those of the sweep's start (an
	// agent's cycle shows in its peers' prompts from the next sweep on;
	// adding or removing agents moves the sweep), and crisis messages
	// reach the same MaxPeersShown agents through a sweep. The window
	// matters only when the others outnumber MaxPeersShown.
	SharedPeers bool
	// MaxInFlight bounds the model calls made outside the lanes: the
	// executors' calls, and cycles run with [existence.Agent.Tick] directly (an
	// [middleware.Limiter]); default 1. Cycles run by the scheduler are bounded
	// by the lanes instead, so that a hung model holds one worker only.
	MaxInFlight int
	// Clock, Heartbeat, Observer and Logger are the agents' defaults (see
	// [existence.Config]). The runner's Clock also drives the scheduler.
	Clock     clock.Clock
	Heartbeat time.Duration
	Observer  event.Observer
	Logger    *slog.Logger

	// Leases, when set, makes the runner share agents with other
	// processes, each agent run by one process at a time: [Runner.Run] claims agents up to MaxAgents
	// every RenewEvery, builds each claimed agent's Config with NewAgent
	// (on a goroutine of its own, so that loading the claimed agents never
	// delays a renewal), renews the leases on the same interval, reports
	// a renewal that came late (an [event.LeaseLate], from a
	// [lease.LateReporter]), stops an agent whose lease was lost without a
	// final save (an [event.LeaseLost]), and on a graceful shutdown saves
	// every agent and then releases every lease at once.
	Leases lease.Manager
	// MaxAgents is the most agents this process runs with Leases; default
	// 10,000.
	MaxAgents int
	// RenewEvery is the lease renewal and claim interval; default
	// [DefaultRenewEvery] (5 s, a third of a 15 s TTL): a healthy renewal
	// then finds two thirds of the TTL left, and one missed renewal still
	// leaves a third, the usual alarm margin of an [event.LeaseLate].
	RenewEvery time.Duration
	// NewAgent builds the Config of a claimed agent (required with
	// Leases): typically a store fenced by l.Epoch. An error releases the
	// lease and is logged.
	NewAgent func(ctx context.Context, l lease.Lease) (existence.Config, error)

	// SharedSlots is the board of slots every agent added sees next to
	// its own (the default of [existence.Config].Memory.SharedSlots), and the one
	// [Runner.PostSharedSlot] and the runner's Minds post to: an
	// identity.SharedBoard, kept where the store keeps shared documents
	// (cmd/internal/storespec.SharedSlots) so that other processes see it.
	// With Minds and no SharedSlots, the runner keeps a board in memory.
	SharedSlots *identity.SharedBoard
	// Minds are background jobs shared by the agents ([existence.Mind]): each runs
	// while [Runner.Run] runs (not under RunVirtual) and posts to the
	// shared board. A mind that fails is reported ([event.MindFailed], to
	// the runner's Observer) with a failed slot and runs again after a
	// backoff; it never stops the runner.
	Minds []existence.Mind
	// Budget is every agent's own token budget unless its Config sets one
	// (see [budget.Budget]); SharedBudget is one budget all the runner's agents
	// spend together: while it is spent, every agent's autonomy waits.
	// Zero values are none.
	Budget       budget.Budget
	SharedBudget budget.Budget
	// TracerProvider and TraceContent are the agents' defaults (see
	// [existence.Config]).
	TracerProvider trace.TracerProvider
	TraceContent   bool
}

// ConcurrencyStats is what a runner sees of its model server, in
// [Stats].Concurrency: every model call its agents make (cycles and
// executors, retries included), measured next to the adapter.
type ConcurrencyStats struct {
	// Adaptive reports that the autonomy lane is sized by the limit
	// ([AdaptiveWorkers]).
	Adaptive bool `json:"adaptive"`
	// Limit is the concurrency limit now: the adaptive limit, which the
	// lanes share (the priority lane's reserve, the autonomy lane the
	// rest; see [Stats].Workers), or AutonomyWorkers.
	Limit int `json:"limit"`
	// InFlight is the model calls in flight now.
	InFlight int `json:"in_flight"`
	// MinRTT is the least latency of a call over the last 256 windows
	// (the server's no-load latency) and RTT the mean of the last window;
	// 0 before enough calls.
	MinRTT time.Duration `json:"min_rtt_ns"`
	RTT    time.Duration `json:"rtt_ns"`
	// Calls counts the calls that reached the server (cancelled ones and
	// unreachable servers aside), Overloads those it refused as overloaded
	// (503, 429, "busy"), Cuts the limit's cuts for them.
	Calls     int64 `json:"calls"`
	Overloads int64 `json:"overloads"`
	Cuts      int64 `json:"cuts"`
}

// Stats are a runner's scheduler counters since it started.
type Stats struct {
	// Dispatched counts the ticks the scheduler handed to a worker and that
	// have ended, per lane ([LaneAutonomy], [LanePriority]); each ran an
	// existence cycle unless the agent's goal was still being pursued or
	// the run ended.
	Dispatched [2]int64
	// Coalesced counts the heartbeats merged into a cycle already queued
	// or running (each called no model).
	Coalesced int64
	// Queued and Running are the cycles waiting and running now, per lane
	// (a mind's model call waiting for or holding an autonomy worker,
	// MindEnv.Lane, counts as one).
	Queued, Running [2]int
	// Agents is the number of agents scheduled and not finished.
	Agents int
	// Triggers counts the cycles asked for outside the heartbeats by
	// notifying slots (slot.Slot.NotifyUser), before coalescing: a burst
	// of twenty counts twenty and makes at most two cycles.
	Triggers int64
	// Workers is each lane's size now: under [AdaptiveWorkers] the
	// autonomy lane's follows Concurrency.Limit.
	Workers [2]int
	// Held counts the cycles a spent budget made wait (each a deferral,
	// its heartbeats coalesced).
	Held int64
	// Concurrency is what the runner sees of the model server.
	Concurrency ConcurrencyStats
	// Budget is the runner-wide budget (Config.SharedBudget) and
	// how much of it the window holds; nil without one.
	Budget *budget.Status
}
