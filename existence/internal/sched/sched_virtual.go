package sched

import (
	"context"
	"errors"
	"time"

	"github.com/existence-loop/sdk/clock"
)

// ErrNotVirtual is returned by [Runner.RunVirtual] when the runner's Clock
// is not a [*clock.Virtual].
var ErrNotVirtual = errors.New("existence: RunVirtual needs a *clock.Virtual as runner.Config.Clock")

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
// The agent's Config.Clock may be the runner's (the default) or its own
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
	sc, ok := r.cfg.Clock.(*clock.Virtual)
	if !ok {
		return ErrNotVirtual
	}
	if err := r.start(ctx, true); err != nil {
		return err
	}
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		now := sc.Now()
		r.smu.Lock()
		t, ok := r.core.nextAt()
		if r.inflight.Len() > 0 && (!ok || r.inflight.Min().end.Before(t)) {
			t, ok = r.inflight.Min().end, true
		}
		if r.core.ready() && (!ok || now.Before(t)) {
			// Cycles queued now (a Say or Wake between calls) may find a
			// free worker now.
			t, ok = now, true
		}
		r.smu.Unlock()
		if !ok || t.After(until) {
			if until.After(now) {
				sc.Set(until)
				// The heartbeats of queued and running cycles due by
				// until count as seen (Stats), as those of the others.
				r.smu.Lock()
				r.core.advance(until)
				r.smu.Unlock()
			}
			return nil
		}
		if t.Before(now) {
			t = now
		}
		sc.Set(t)
		r.smu.Lock()
		var ended []inflight
		for r.inflight.Len() > 0 && !r.inflight.Min().end.After(t) {
			ended = append(ended, r.inflight.Pop())
		}
		r.smu.Unlock()
		for _, f := range ended {
			r.finish(f.j.e.node, f.j, f.end, false)
		}
		r.smu.Lock()
		r.core.advance(t)
		jobs := r.core.dispatch(t)
		r.smu.Unlock()
		for _, j := range jobs {
			n := j.e.node
			ac, own := n.a.Clock().(*clock.Virtual)
			if own && ac != sc {
				ac.Set(t)
			}
			end := r.tick(n, j, true)
			if !own {
				end = t
			}
			if end.Before(t) {
				end = t
			}
			sc.Set(t)
			r.smu.Lock()
			r.seq++
			r.inflight.Push(inflight{end: end, seq: r.seq, j: j})
			r.smu.Unlock()
		}
	}
}
