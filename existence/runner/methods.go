package runner

import (
	"context"
	"time"

	"github.com/existence-loop/sdk/clock"
	"github.com/existence-loop/sdk/existence"
	"github.com/existence-loop/sdk/existence/event"
	"github.com/existence-loop/sdk/existence/internal/sched"
	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/slot"
)

// Runner runs many agents as peers in one process. Agents are
// data: each heartbeat is a due time in a timer heap, and a goroutine runs
// only while there is work (a cycle in a lane, or an executor pursuing a
// goal). A heartbeat brings an agent's cycle due in a lane:
//
//   - the priority lane (PriorityWorkers) for an agent with an unread host
//     message, a pending [Runner.Wake], or in crisis;
//   - the autonomy lane (AutonomyWorkers) otherwise, not before Cooldown
//     after the agent's previous cycle.
//
// An agent has at most one cycle queued or running: a heartbeat falling due
// meanwhile is merged into it and counted ([event.CycleStats].Coalesced), and
// never calls the model. In each lane the cycle due earliest runs first.
// How late each cycle started is [event.CycleStats].Lateness. Agents added
// together start spread over one heartbeat, deterministically from their
// ids.
//
// Peers: each agent's "YOUR PEERS" section shows at most MaxPeersShown
// others, from a snapshot updated after each cycle (building a prompt locks
// no other agent). When all the others fit, all are shown, ordered by id.
// Otherwise the section shows, in this order and without repeats: the
// agents that messaged this one most recently (newest first); then agents
// in crisis (by id, rotating with the agent's cycle count); then a stable
// rotation through all agents by id, starting after the agent itself and
// moving on by MaxPeersShown every cycle (with [Config].SharedPeers, at the
// same place for every agent, moving on once a sweep); and ends with "(and
// N others)". A crisis message goes to the peers shown in the agent's last
// prompt only.
type Runner struct {
	cfg Config
	e   *sched.Runner
}

// Agents returns the agents in the order they were added.
func (r *Runner) Agents() []*existence.Agent {
	ws := r.e.Agents()
	out := make([]*existence.Agent, len(ws))
	for i, a := range ws {
		out[i] = a.Unwrap().(*existence.Agent)
	}
	return out
}

// Agent returns the agent with the given id, or nil. It is O(1).
func (r *Runner) Agent(id string) *existence.Agent {
	if a := r.e.Agent(id); a != nil {
		return a.Unwrap().(*existence.Agent)
	}
	return nil
}

// Len returns the number of agents in the runner.
func (r *Runner) Len() int {
	return r.e.Len()
}

// Stats returns the scheduler's counters.
func (r *Runner) Stats() Stats {
	return statsOf(r.e.Stats())
}

// Run drives the agents in real time until ctx ends, or, without Leases,
// until every agent has reached its MaxCycles (and its last goal ended).
// When ctx ends, it waits for the cycles running, stops every agent's goal
// (it stays active in the stored state), saves every agent and, with
// Leases, releases every lease at once. An agent's error does not stop the
// others; the errors of the final saves are joined. A model error never
// stops it (the fallback goal is used).
func (r *Runner) Run(ctx context.Context) error {
	return r.e.Run(ctx)
}

// RunVirtual drives the agents in virtual time up to until, deterministically
// (for existence/simulate): it runs on the calling
// goroutine, on the same scheduler as [Runner.Run] (heartbeat heap, lanes,
// coalescing, cooldown, due-time fairness, staggered start), and never
// sleeps. The runner's Clock must be a [*clock.Virtual]; RunVirtual sets it.
//
// It repeats, until the next event is after until:
//
//  1. take the earliest event: a cycle ending, or a heartbeat (or the end
//     of a cooldown) falling due; set the clock to its time;
//  2. free the workers of the cycles ending then (earliest end first), and
//     record the heartbeats falling due (the earliest agent first; ties in
//     the order they were scheduled);
//  3. dispatch the queued cycles to free workers, the priority lane first
//     and each lane earliest due first, and run each at once, inline: the
//     agent's Tick with the clock at the dispatch time, then its goal's
//     executor to completion.
//
// Model latency is virtual: a model reads the agent's clock with
// [ClockFrom](ctx) and calls its Advance(latency). The cycle's end is the
// agent's clock after Tick (dispatch time + what the model advanced), its
// worker stays busy until then, and its cooldown counts from then. The
// clock is then set back to the dispatch time before the next cycle runs.
// The agent's Config.Timing.Clock may be the runner's (the default) or its own
// [*clock.Virtual]; either way it is set to the dispatch time first.
//
// A cycle is atomic in virtual time: its effects (the goal, a message to a
// peer) are visible from its dispatch time, and its events carry the times
// the model advanced to. Executors run to completion within the dispatch;
// their outcome is recorded at the agent's next heartbeat. Retries wait in
// real time, so simulations should use Retry{Attempts: 1}.
//
// RunVirtual may be called again with a later until to go on; [Runner.SayAsHost],
// [Runner.Wake] and [Runner.Add] between calls take effect at the clock's
// time. It returns ctx's error when ctx ends, and ErrNotVirtual. Agents
// that reach MaxCycles are stopped and saved as with Run; call
// [Runner.Close] at the end. A runner runs either virtually or in real
// time, not both; Leases are not used.
func (r *Runner) RunVirtual(ctx context.Context, until time.Time) error {
	return r.e.RunVirtual(ctx, until)
}

// Wake runs the agent's next cycle in the priority lane now, ahead of the
// autonomy backlog: call it when a task was assigned to the agent,
// or for anything else it should answer at once. Errors: an unknown id.
func (r *Runner) Wake(id string) error {
	return r.e.Wake(id)
}

// Close closes every agent (see [existence.Agent.Close]) and releases their locks.
func (r *Runner) Close() error {
	return r.e.Close()
}

// SayAsHost delivers a host message to the agents with the given ids, or to every
// agent when none is given; each one's next cycle runs in the priority lane.
// Unknown ids are an error; the message is still delivered to the known
// ones.
func (r *Runner) SayAsHost(ctx context.Context, text string, to ...string) error {
	return r.e.SayAsHost(ctx, text, to...)
}

// Send delivers a message from one agent to another agent's inbox
// (spec §2 row 15); the recipient then shows the sender first among its
// peers. Errors: unknown ids, or the save error.
func (r *Runner) Send(ctx context.Context, fromID, toID, text string) error {
	return r.e.Send(ctx, fromID, toID, text)
}

// Subscribe adds fn as an observer of the events of every agent of the
// runner, those added later included, and of its shared board and minds,
// after [Config].Observer and each agent's own Observer; it returns
// what removes it (calling it twice is harmless). fn is called as an
// [event.Observer] is: synchronously, possibly concurrently for different
// agents, so it must be safe for concurrent use and return quickly.
func (r *Runner) Subscribe(fn func(event.Event)) (cancel func()) {
	return r.e.Subscribe(fn)
}

// SharedSlots returns the runner's shared board (Config.Memory.SharedSlots),
// or nil.
func (r *Runner) SharedSlots() *identity.SharedBoard {
	return r.e.SharedSlots()
}

// PostSharedSlot puts s on the runner's shared board
// (identity.SharedBoard.Put: cleaned, stamped with the board's clock when
// UpdatedAt is zero, checked, the least important dropped beyond the
// board's cap) and reports it to the runner's Observer ([event.Slot] and
// [event.SlotDropped], with Shared set and no agent). With NotifyUser,
// every agent that sees the board (Config.Memory.SharedSlots, the runner's by
// default) is asked for a cycle at once, as [existence.Agent.PostSlot] describes.
// Errors: [ErrNoSharedBoard]; slot.ErrInvalid (nothing changed); the
// board's errors (identity.ErrCorrupt, the store's).
func (r *Runner) PostSharedSlot(ctx context.Context, s slot.Slot) error {
	return r.e.PostSharedSlot(ctx, s)
}

// RemoveSharedSlot removes the slot with id from the runner's shared board
// and reports whether there was one ([event.SlotDropped], Reason "removed").
// Errors: [ErrNoSharedBoard]; the board's errors.
func (r *Runner) RemoveSharedSlot(ctx context.Context, id string) (bool, error) {
	return r.e.RemoveSharedSlot(ctx, id)
}

// ClockFrom returns the clock of the agent whose cycle ctx belongs to, or
// nil. A simulated model (existence/simulate) uses it to take virtual
// time: under
// [Runner.RunVirtual], a model that calls Advance(latency) on that clock
// (a [clock.Virtual]) keeps the worker busy
// for that long in virtual time.
func ClockFrom(ctx context.Context) clock.Clock { return sched.ClockFrom(ctx) }
