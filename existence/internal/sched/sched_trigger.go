package sched

import (
	"context"
	"time"

	"github.com/existence-loop/sdk/llm"
)

// triggerGapShare is the share of an agent's heartbeat that is the
// default of [RunnerConfig].TriggerGap: a quarter. A flood of notifying
// slots then costs an agent at most four cycles per heartbeat beyond its
// own, whoever posts them.
const triggerGapShare = 4

// DefaultTriggerGap returns the default trigger gap of an agent of the
// given heartbeat: a quarter of the heartbeat (15 s for 60 s).
func DefaultTriggerGap(heartbeat time.Duration) time.Duration {
	return heartbeat / triggerGapShare
}

// trigger asks for a cycle of e at now outside its heartbeats: a slot
// posted with notify_user (GLaDOS's event trigger, the scene change of
// GLaDOS). It goes through the same coalescing as heartbeats, so that a
// burst of triggers makes one cycle:
//
//   - an idle agent's cycle is queued at now in the lane a heartbeat
//     would get (classify: the autonomy lane, unless a host message, a
//     wake or a crisis makes it the priority lane); an autonomy cycle
//     waits for the end of the cooldown and for the trigger gap after the
//     agent's last cycle (deferred, like a heartbeat in its cooldown): a
//     notified wake-up has its own rate, at most one per trigger gap;
//   - a cycle already wanted (deferred) or queued absorbs it;
//   - a cycle running absorbs it too, but one more cycle is wanted when
//     it ends (its prompt may have been built before the trigger), under
//     the same rules: a second trigger during the same cycle adds nothing.
//
// So triggers never cost more than one cycle beyond the one they find,
// never skip the cooldown, and never pass the priority lane.
func (s *schedCore) trigger(e *schedEntry, now time.Time) {
	if e.removed {
		return
	}
	switch e.st {
	case slotIdle:
		lane := LaneAutonomy
		if s.classify != nil {
			lane = s.classify(e)
		}
		until := e.coolUntil
		if gap := s.gapOf(e); !e.lastEnd.IsZero() && e.lastEnd.Add(gap).After(until) {
			until = e.lastEnd.Add(gap)
		}
		if lane == LaneAutonomy && now.Before(until) {
			e.st, e.due = slotDeferred, until
			s.rearm(e)
			return
		}
		s.enqueue(e, lane, now)
	case slotRunning:
		e.again = true
	}
}

// borrow waits for a free worker of the autonomy lane and holds it until
// release is called: a mind's model call ([MindEnv].Lane) runs on the
// autonomy lane, never the priority lane, and queues behind the cycles
// already due (due-time fairness). When the runner does not run in real
// time (not started, finished, or under RunVirtual) there is no lane to
// share and the call runs at once. Errors: ctx's, while waiting.
func (r *Runner) borrow(ctx context.Context) (release func(), err error) {
	r.smu.Lock()
	if !r.started || r.virtual || r.runCtx == nil || r.runCtx.Err() != nil {
		r.smu.Unlock()
		return func() {}, nil
	}
	e := &schedEntry{id: "(mind)", timerIdx: -1, queueIdx: -1, lend: make(chan struct{})}
	r.core.enqueue(e, LaneAutonomy, r.cfg.Clock.Now())
	r.smu.Unlock()
	r.poke()
	give := func() {
		r.smu.Lock()
		r.core.busy[LaneAutonomy]--
		r.smu.Unlock()
		r.poke() // a cycle may take the worker now
	}
	select {
	case <-e.lend:
		var once bool
		return func() {
			if !once {
				once = true
				give()
			}
		}, nil
	case <-ctx.Done():
		r.smu.Lock()
		granted := e.st == slotRunning
		if !granted && e.queueIdx >= 0 {
			r.core.queues[LaneAutonomy].Remove(e.queueIdx)
		}
		r.smu.Unlock()
		if granted {
			give()
		}
		return nil, ctx.Err()
	}
}

// laneModel is a model whose every call holds a worker of the runner's
// autonomy lane ([MindEnv].Lane).
type laneModel struct {
	r *Runner
	m llm.Model
}

// Generate waits for an autonomy worker, calls the model and frees the
// worker. Errors: ctx's while waiting; the model's.
func (l laneModel) Generate(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	release, err := l.r.borrow(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	return l.m.Generate(ctx, req)
}

// gapOf is e's trigger gap: RunnerConfig.TriggerGap, where 0 means the
// default (a quarter of e's heartbeat) and a negative value none.
func (s *schedCore) gapOf(e *schedEntry) time.Duration {
	switch {
	case s.triggerGap == 0:
		return DefaultTriggerGap(e.hb)
	case s.triggerGap < 0:
		return 0
	}
	return s.triggerGap
}
