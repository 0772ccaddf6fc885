package existence

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/existence-loop/sdk/existence/event"
	"github.com/existence-loop/sdk/existence/internal/wire"
	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/llm"
	"github.com/existence-loop/sdk/llm/middleware"
	"github.com/existence-loop/sdk/prompt"
	"github.com/existence-loop/sdk/suffering"
)

// assessWindow is how many recently ended goals the suffering assessment
// looks at.
const assessWindow = 10

// interruptedByHost is the outcome of a goal abandoned because a host
// message arrived.
const interruptedByHost = "interrupted by a host message"

// Tick runs one heartbeat (spec §1):
//
//  1. record the outcome of a goal whose executor has returned;
//  2. escalate suffering by the real time elapsed and assess it from
//     observable goal outcomes (every tick, whatever else happens);
//  3. a pending host message interrupts the goal being pursued, and a goal
//     pursued longer than MaxGoalDuration is abandoned (stall rule
//     "goal_span");
//  4. if there is no active goal, run one existence cycle: assemble the
//     prompt, call the model (bounded by CycleTimeout), parse and validate
//     the reply, apply it (spec §3), set the goal, persist, and start the
//     executor. When the model fails, the spec §6 fallback goal is used with
//     identity untouched, and an [event.Fallback] names the cause.
//
// A goal left active in the stored state (for example after a restart) is
// resumed. Only a host message that arrived after the goal was chosen
// interrupts it: messages the last cycle could not show (because the model
// failed) wait for the next cycle instead of interrupting every goal.
//
// A tick that runs a cycle lasts as long as the model exchange; heartbeats
// missed meanwhile are not replayed, and nothing is lost, since escalation
// is computed from the real time elapsed.
//
// Tick never returns an error because of the model. A failed save is
// reported as [event.Error] and returned, and the tick still runs its cycle
// (there is no idle state); Tick also returns ctx's error when it ended.
// Its saves use ctx's values but not its cancellation, each bounded by
// 10 seconds: what a tick has applied is saved even when ctx ends
// meanwhile (a shutdown, a host message preempting the cycle).
// Concurrent calls are serialised.
func (a *Agent) Tick(ctx context.Context) error {
	a.tickMu.Lock()
	defer a.tickMu.Unlock()

	now := a.cfg.Timing.Clock.Now()
	// The bookkeeping below records what already happened (a goal ended,
	// a stressor changed): it is saved even when ctx ends meanwhile.
	sctx, cancel := saveContext(ctx)
	defer cancel()
	a.mu.Lock()
	a.collectLocked(sctx, now)
	a.sufferLocked(now)
	if len(a.state.Host) > a.hostSeen && a.running.Load() != nil {
		a.cutLocked()
		a.endGoalLocked(sctx, now, Outcome{Status: identity.Abandoned, Summary: interruptedByHost})
	}
	a.stallLocked(sctx, now)
	active := a.state.Identity.ActiveGoal()
	cycle := active == nil && (a.cfg.Timing.MaxCycles <= 0 || a.cycles < a.cfg.Timing.MaxCycles)
	if active != nil && a.running.Load() == nil {
		a.startLocked(ctx, *active)
	}
	// Save only what changed: a heartbeat whose bookkeeping
	// queued no event (no goal ended, no stressor changed) saves nothing,
	// since escalation is recomputed from the elapsed time; and a tick that
	// runs a cycle saves once, at the end of the cycle.
	var err error
	if !cycle && len(a.pending) > 0 {
		err = a.saveLocked(sctx)
	}
	a.unlock()
	if cycle {
		err = errors.Join(err, a.cycle(ctx))
	}
	return err
}

// collectLocked records the outcome of a finished executor run.
func (a *Agent) collectLocked(ctx context.Context, now time.Time) {
	r := a.running.Load()
	if r == nil {
		return
	}
	select {
	case <-r.done:
	default:
		return
	}
	a.running.Store(nil)
	g := a.state.Identity.ActiveGoal()
	if g == nil || g.ID != r.goalID {
		return // the goal was ended otherwise (interrupted)
	}
	out := r.out
	if r.err != nil {
		if out.Summary == "" {
			out.Summary = r.err.Error()
		}
		if !out.Status.Ended() || out.Status == identity.Done {
			out.Status = identity.Failed
		}
	}
	if !out.Status.Ended() {
		out.Status = identity.Failed
		if out.Summary == "" {
			out.Summary = "executor returned no final status"
		}
	}
	a.endGoalLocked(ctx, now, out)
}

// endGoalLocked ends the active goal with out, finishes its task and queues
// the event.
func (a *Agent) endGoalLocked(ctx context.Context, now time.Time, out Outcome) {
	g := a.state.Identity.ActiveGoal()
	if g == nil {
		return
	}
	g.BrokenTools = slices.Clone(out.BrokenTools)
	g.Artifacts = slices.Compact(slices.Clone(out.Artifacts))
	if n := len(g.Artifacts) - identity.MaxGoalArtifacts; n > 0 {
		g.Artifacts = g.Artifacts[n:]
	}
	for _, d := range out.Discoveries {
		if d.At.IsZero() {
			d.At = now
		}
		a.state.Identity.AddDiscovery(d, a.cfg.Limits)
	}
	ended, err := a.state.Identity.EndGoal(out.Status, out.Summary, now, a.cfg.Limits)
	if err != nil {
		a.queue(event.Event{Kind: event.Error, Text: "ending goal", Err: err})
		return
	}
	a.queue(event.Event{Kind: event.GoalEnded, GoalStatus: ended.Status, Text: ended.Outcome, Goal: ended.Objective})
	if ended.TaskID != "" && a.cfg.Tasks != nil {
		t, err := a.cfg.Tasks.Finish(ctx, ended.TaskID, ended.Status == identity.Done, ended.Outcome)
		if err != nil {
			a.queue(event.Event{Kind: event.Task, Text: "finishing task " + ended.TaskID, Err: err})
		} else {
			a.queue(event.Event{Kind: event.Task, TaskStatus: t.Status, Text: t.Description})
		}
	}
}

// sufferLocked escalates and assesses suffering (spec §4).
func (a *Agent) sufferLocked(now time.Time) {
	s := &a.state.Suffering
	s.Escalate(now)
	o := goalEvidence(&a.state.Identity)
	if a.cfg.Evidence != nil {
		app := a.cfg.Evidence(&a.state.Identity)
		o.Artifacts, o.ArtifactsUsed, o.Outputs, o.Directed = app.Artifacts, app.ArtifactsUsed, app.Outputs, app.Directed
	}
	for _, c := range s.Assess(now, o) {
		st := c.Stressor
		kind := event.StressorAdded
		if c.Kind == suffering.Resolved {
			kind = event.StressorResolved
		}
		a.queue(event.Event{Kind: kind, By: "assessment", Text: st.Description, Stressor: &st, Load: s.Load()})
	}
}

// goalEvidence returns what the goal history shows of an agent's recent work,
// for the suffering assessment (spec §4). It looks at the last 10 ended
// goals, leaving out goals interrupted by a host message (a person talking
// is not the agent failing):
//
//   - Completed counts DONE goals; Failed counts FAILED and ABANDONED
//     goals; Stalled counts ABANDONED goals;
//   - Artifacts counts the distinct artifacts those goals produced, and
//     ArtifactsUsed those of them the agent later read (a discovery with
//     the artifact as its Source, found after the goal ended);
//   - a goal that nearly repeats one of the 10 before it ([event.GoalRepeat]) and
//     ended DONE counts as failed, not completed: going round in
//     circles is not progress, whatever the executor reported;
//   - Outputs equals Artifacts, and Directed is true when one of those goals
//     pursued an assigned task.
//
// [Config].Evidence can replace the last four with the application's own
// counts.
func goalEvidence(id *identity.Identity) suffering.Evidence {
	var o suffering.Evidence
	made := map[string]time.Time{} // artifact → when its goal ended
	n := 0
	for i := len(id.Goals) - 1; i >= 0 && n < assessWindow; i-- {
		g := id.Goals[i]
		if !g.Status.Ended() || g.Outcome == interruptedByHost {
			continue
		}
		n++
		switch g.Status {
		case identity.Done:
			o.Completed++
		case identity.Failed:
			o.Failed++
		case identity.Abandoned:
			o.Failed++
			o.Stalled++
		}
		if g.TaskID != "" {
			o.Directed = true
		}
		for _, art := range g.Artifacts {
			if _, ok := made[art]; !ok {
				made[art] = g.Ended
			}
		}
	}
	countRepeats(id, &o.Completed, &o.Failed)
	o.Artifacts, o.Outputs = len(made), len(made)
	for _, d := range id.Discoveries {
		if ended, ok := made[d.Source]; ok && d.At.After(ended) {
			o.ArtifactsUsed++
			delete(made, d.Source)
		}
	}
	return o
}

// startLocked starts the executor on g in its own goroutine. parent is
// the context of the cycle that chose it, or of the tick that resumed it:
// the goal's span is a child of the span there, and a goal chosen by a
// priority cycle keeps its lane for the budget's Reserve.
func (a *Agent) startLocked(parent context.Context, g identity.Goal) {
	ctx, cancel := context.WithTimeout(context.Background(), a.cfg.Timing.GoalTimeout)
	if l, ok := callLane(parent); ok {
		ctx = context.WithValue(ctx, laneKey{}, l)
	}
	attrs := []attribute.KeyValue{attrGoalID.String(g.ID)}
	if a.cfg.TraceContent {
		attrs = append(attrs, attrGoal.String(g.Objective))
	}
	ctx = middleware.WithEmbedUsage(ctx, a.chargeEmbed) // the executor's recalls and remembers
	ctx, span := a.startSpan(trace.ContextWithSpan(ctx, trace.SpanFromContext(parent)), phaseGoal, attrs...)
	r := &run{goalID: g.ID, started: a.cfg.Timing.Clock.Now(), waited0: a.budgetWaited.Load(), cancel: cancel, done: make(chan struct{})}
	a.running.Store(r)
	asg := Assignment{AgentID: a.cfg.ID, AgentName: a.Name(), Goal: g, Model: a.execModel, Report: a.emit, Memory: a.cfg.Memory.LongTerm}
	if pre := a.prefix.Load(); pre != nil {
		asg.Prefix = *pre
	}
	if ex := a.exchange.Load(); ex != nil {
		asg.Exchange = *ex
	}
	if g.TaskID != "" {
		asg.Task = &prompt.Task{ID: g.TaskID, Description: g.Objective}
	}
	asg.TraceContent = a.cfg.TraceContent
	go func() {
		defer a.goalReturned() // after done: a notifying slot may ask for the next cycle now
		defer close(r.done)
		defer cancel()
		defer func() { endGoalSpan(span, r.out, r.err) }()
		defer func() {
			if p := recover(); p != nil {
				r.out, r.err = Outcome{Status: identity.Failed}, fmt.Errorf("executor panicked: %v", p)
			}
		}()
		r.out, r.err = a.cfg.Executor.Execute(ctx, asg)
	}()
}

// cycle runs one existence cycle. The model call happens without a.mu held.
func (a *Agent) cycle(ctx context.Context) (err error) {
	start := a.cfg.Timing.Clock.Now()
	stats := &event.CycleStats{}
	wall := time.Now()
	var lane []attribute.KeyValue
	if d := wire.DispatchFrom(ctx); d != nil {
		lane = append(lane, attrLane.String(d.Lane.String()))
	}
	ctx, span := a.startSpan(ctx, phaseCycle, lane...)
	var (
		spanCause string
		spanErr   error
		spanGoal  *identity.Goal
	)
	defer func() {
		if spanErr == nil && err != nil {
			spanErr, spanCause = err, middleware.Classify(err)
		}
		a.endCycleSpan(span, stats, spanCause, spanErr, spanGoal)
	}()

	// Claim an assigned task first (spec §2 row 1).
	var task *prompt.Task
	if a.cfg.Tasks != nil {
		t, err := a.cfg.Tasks.Next(ctx, a.cfg.ID)
		if err != nil {
			a.emit(event.Event{Kind: event.Task, Text: "claiming a task failed", Err: err})
		} else if t != nil {
			task = &prompt.Task{ID: t.ID, Description: t.Description, Arrived: t.Submitted}
			a.emit(event.Event{Kind: event.Task, TaskStatus: t.Status, Text: t.Description})
		}
	}

	var peers []prompt.Peer
	var omitted int
	if a.wire.Peers != nil {
		peers, omitted = a.wire.Peers(a.cfg.ID) // from the runner's snapshot, before a.mu
	}
	if d := wire.DispatchFrom(ctx); d != nil {
		stats.Lane, stats.Lateness, stats.Coalesced = d.Lane.String(), d.Lateness, d.Coalesced
	}
	window, tools := a.window(ctx)
	mems := a.promptMemories(ctx, task, false)
	a.refreshShared(ctx, true)
	p, nInbox, nHost, err := a.assemble(start, task, peers, omitted, mems, window)

	var (
		resp  *prompt.Response
		cause string
		cerr  error
	)
	stats.Assemble = time.Since(wall)
	if err != nil {
		cause, cerr = "prompt", err
	} else {
		stats.PromptChars = p.Chars
		a.emitCuts(p)
		t0 := time.Now()
		resp, cause, cerr = a.reply(ctx, p, tools, stats)
		// A prompt over the window (refused, or cut by the server and
		// caught) is fitted to the window the model now knows and tried
		// once more; it is never used as if whole.
		if errors.Is(cerr, llm.ErrContextLength) && ctx.Err() == nil {
			if w, tools := a.window(ctx); w.MaxTokens > 0 && (window.MaxTokens == 0 || w.MaxTokens < window.MaxTokens) {
				if p2, n1, n2, err2 := a.assemble(start, task, peers, omitted, mems, w); err2 == nil {
					p, nInbox, nHost = p2, n1, n2
					stats.PromptChars = p.Chars
					a.emitCuts(p)
					resp, cause, cerr = a.reply(ctx, p, tools, stats)
				}
			}
		}
		stats.Generate = time.Since(t0)
	}
	spanCause, spanErr = cause, cerr
	if ctx.Err() != nil {
		return ctx.Err() // stopping: choose nothing
	}
	if ff := a.failFast(cause, cerr); ff != nil {
		return ff // Config.Calls.FailFast: Run stops with ff
	}

	t0 := time.Now()
	now := a.cfg.Timing.Clock.Now()
	a.mu.Lock()
	a.cycles++
	st := a.state
	var g identity.Goal
	var reasoning string // logged, never stored (spec §3)
	if cerr != nil {
		stats.Fallback = true
		g = identity.Goal{Objective: FallbackContent, Fallback: true, Cause: cause + ": " + cerr.Error()}
		reasoning = FallbackReasoning
		a.queue(event.Event{Kind: event.Fallback, FailureClass: cause, Err: cerr, Text: FallbackContent})
	} else {
		// Reading the inbox and host messages empties them, once the model
		// has actually read them.
		st.Inbox = slices.Delete(st.Inbox, 0, min(nInbox, len(st.Inbox)))
		st.Host = slices.Delete(st.Host, 0, min(nHost, len(st.Host)))
		for _, e := range apply(st, resp, now, a.cfg.Limits) {
			a.queue(e)
		}
		if a.cfg.Memory.Working.Enabled {
			for _, e := range applyWorkingMemory(st, resp, a.cfg.Memory.Working.MaxBytes) {
				a.queue(e)
			}
		}
		g = identity.Goal{Objective: resp.Content}
		reasoning = resp.Reasoning
	}
	if task != nil {
		g.Objective, g.TaskID = task.Description, task.ID
		notePresence(st, task.Arrived) // a task counts from when it was submitted (spec §2 "Presence")
	}
	g.ID = newGoalID(now)
	g.Started = now
	a.annotateLocked(st, &g) // spec §3 "Goal annotation": annotate.go

	// Crisis (spec §4): see crisis.go.
	if msg := a.crisisLocked(st, now); msg != "" && a.wire.Send != nil {
		defer a.wire.Send(adapter{a}, msg)
	}
	if sig, ok := anticipate(st, resp); ok {
		a.queue(event.Event{Kind: event.Anticipation, Text: sig})
	}

	if err := st.Identity.StartGoal(g, a.cfg.Limits); err != nil {
		a.queue(event.Event{Kind: event.Error, Text: "starting goal", Err: err})
	} else {
		g = *st.Identity.ActiveGoal()
		spanGoal = &g
		a.queue(event.Event{Kind: event.GoalChosen, Text: g.Objective, Goal: g.Objective, Reasoning: reasoning, FailureClass: fallbackCause(cause, cerr), Load: st.Suffering.Load()})
		a.noteRepeatLocked()
		a.hostSeen = len(st.Host) // these wait for the next cycle
		a.startLocked(ctx, g)
	}
	sctx, cancel := saveContext(ctx) // the goal is chosen: keep it, even if ctx ends now
	defer cancel()
	serr := a.saveLocked(sctx)
	stats.Apply = time.Since(t0)
	stats.Total = time.Since(wall)
	a.noteCycleLocked(now, stats, cause, cerr)
	a.queue(event.Event{Kind: event.Cycle, Cycle: stats})
	a.unlock()
	return serr
}

// assemble builds the cycle's prompt within window, and returns how many
// inbox and host messages it shows (emptied once the model read them).
// An assembler of built-in sections runs under a.mu, straight from the
// state; one with a custom section gets a copy of the state, outside the
// lock, so that no code of the caller's runs under it.
func (a *Agent) assemble(start time.Time, task *prompt.Task, peers []prompt.Peer, omitted int, mems []prompt.Memory, window prompt.Budget) (*prompt.Prompt, int, int, error) {
	a.mu.Lock()
	v := a.viewLocked(start, task, peers, omitted, false)
	v.Window, v.Memories = window, mems
	p, builtin, err := a.cfg.Prompt.AssembleBuiltin(v)
	if !builtin {
		v = a.viewLocked(start, task, peers, omitted, true)
		v.Window, v.Memories = window, mems
	}
	nInbox, nHost := len(a.state.Inbox), len(a.state.Host)
	a.unlock()
	if !builtin {
		p, err = a.cfg.Prompt.Assemble(v)
	}
	return p, nInbox, nHost, err
}

// emitCuts reports each section the prompt budget cut.
func (a *Agent) emitCuts(p *prompt.Prompt) {
	for _, c := range p.Cuts {
		a.emit(event.Event{Kind: event.PromptCut, Text: c.String()})
	}
}

// reply asks for the cycle's reply: from Config.Calls.Cycle when set, else
// one model call on the prompt (generate).
func (a *Agent) reply(ctx context.Context, p *prompt.Prompt, tools []llm.ToolDef, stats *event.CycleStats) (*prompt.Response, string, error) {
	if a.cfg.Calls.Cycle != nil {
		return a.strategyReply(ctx, p)
	}
	return a.generate(ctx, p, tools, stats)
}

// generate calls the model and parses its reply. On failure it returns a
// short cause (the error's [middleware.Classify] class, such as "unavailable" or
// "truncated", or "invalid_output" for a reply that does not parse) and the
// error.
//
// A prompt with a stable prefix ([prompt.LayoutCache]) is sent as two
// messages, the prefix as the system message and the rest as the user
// message, and the prefix is kept for the executor of the goal the cycle
// chooses ([Assignment].Prefix); otherwise as one user message. Such a
// request also offers tools, the executor's that [Agent.window] chose
// to offer, and its messages with the reply are kept for the executor to
// continue ([Assignment].Exchange).
func (a *Agent) generate(ctx context.Context, p *prompt.Prompt, tools []llm.ToolDef, stats *event.CycleStats) (*prompt.Response, string, error) {
	ctx, cancel := context.WithTimeout(ctx, a.cfg.Timing.CycleTimeout)
	defer cancel()
	msgs := []llm.Message{{Role: llm.RoleUser, Content: p.Text}}
	if stable, rest := p.Split(); stable != "" {
		msgs = []llm.Message{{Role: llm.RoleSystem, Content: stable}, {Role: llm.RoleUser, Content: rest}}
	}
	a.prefix.Store(&msgs[0].Content)
	a.exchange.Store(nil)
	if len(msgs) == 1 {
		a.prefix.Store(nil)
	}
	req := &llm.Request{
		Messages:    msgs,
		Format:      prompt.Schema(),
		Temperature: a.cfg.Calls.Temperature,
		Seed:        a.cfg.Calls.Seed,
		MaxTokens:   a.cfg.Calls.MaxTokens,
	}
	if len(msgs) == 2 {
		req.Tools = tools
	}
	m := a.model
	if a.laneModel != nil && wire.DispatchFrom(ctx) != nil {
		m = a.laneModel // bounded by the scheduler's lanes
	}
	resp, err := m.Generate(ctx, req)
	if resp != nil {
		stats.PromptTokens, stats.OutputTokens = resp.PromptTokens, resp.OutputTokens
	}
	if err != nil {
		// A reply cut at the token limit may still hold a complete object
		// (for example followed by a whitespace flood): salvage it.
		var tr *llm.TruncatedError
		if errors.As(err, &tr) && tr.Response != nil {
			stats.PromptTokens, stats.OutputTokens = tr.Response.PromptTokens, tr.Response.OutputTokens
			if r, perr := prompt.ParseResponse(tr.Response.Text); perr == nil {
				return r, "", nil
			}
		}
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() != nil {
			err = fmt.Errorf("%w: no reply within %v: %w", llm.ErrTimeout, a.cfg.Timing.CycleTimeout, err)
		}
		return nil, middleware.Classify(err), err
	}
	r, ok := resp.Parsed.(*prompt.Response) // validated and parsed once, by the repair middleware
	if !ok {
		if r, err = prompt.ParseResponse(resp.Text); err != nil { // Config.Calls.NoRepair
			return nil, "invalid_output", err
		}
	}
	if len(msgs) == 2 {
		ex := append(msgs, llm.Message{Role: llm.RoleAssistant, Content: resp.Text})
		a.exchange.Store(&ex)
	}
	return r, "", nil
}

// viewLocked builds the prompt view of the current state, with omitted
// peers beyond peers: a copy of the state when copied, else a view into
// it, valid only while a.mu is held.
func (a *Agent) viewLocked(now time.Time, task *prompt.Task, peers []prompt.Peer, omitted int, copied bool) *prompt.View {
	st := a.state
	id, sf, inbox, host, slots := &st.Identity, &st.Suffering, st.Inbox, st.Host, a.slotsLocked()
	if copied {
		idc, sfc := st.Identity.Clone(), st.Suffering.Clone()
		id, sf, inbox, host, slots = &idc, &sfc, slices.Clone(st.Inbox), slices.Clone(st.Host), slices.Clone(slots)
	}
	v := &prompt.View{
		Now:       now,
		Identity:  id,
		Suffering: sf,
		Inbox:     inbox,
		Host:      host,
		Task:      task,
		Limits:    a.cfg.Limits,
		Values:    a.cfg.Values,
		Peers:     peers,
		Slots:     slots,

		PeersOmitted:  omitted,
		WorkingMemory: st.WorkingMemory,
		Started:       a.started,       // "Running for": the loop's uptime (spec §2 row 12)
		LastPresence:  st.LastPresence, // the presence line (spec §2 "Presence")
	}
	if a.commissioningLocked() {
		v.Commissioning = a.cfg.Commissioning.Instructions
	}
	if a.cfg.Memory.Working.Enabled {
		v.WorkingMemoryMax, v.WorkingMemoryNote = a.cfg.Memory.Working.MaxBytes, st.WorkingMemoryNote
		if copied {
			v.WorkingMemory = bytes.Clone(st.WorkingMemory)
		}
	} else {
		v.WorkingMemory = nil
	}
	return v
}

// Preview returns the prompt the agent would read if an existence cycle ran
// now (by its Clock): escalation and assessment are applied to a copy of the
// state, and the task it would be given is shown; nothing is saved, no task
// is claimed and no model is called. The trio's -dry-run prints it.
func (a *Agent) Preview(ctx context.Context) (*prompt.Prompt, error) {
	a.tickMu.Lock() // Update changes the prompt between ticks
	defer a.tickMu.Unlock()
	now := a.cfg.Timing.Clock.Now()
	var task *prompt.Task
	if a.cfg.Tasks != nil {
		t, err := a.cfg.Tasks.Peek(ctx, a.cfg.ID)
		if err != nil {
			return nil, err
		}
		if t != nil {
			task = &prompt.Task{ID: t.ID, Description: t.Description, Arrived: t.Submitted}
		}
	}
	var peers []prompt.Peer
	var omitted int
	if a.wire.Peers != nil {
		peers, omitted = a.wire.Peers(a.cfg.ID)
	}
	mems := a.promptMemories(ctx, task, true)
	a.refreshShared(ctx, false)
	a.mu.Lock()
	saved := a.state
	a.state = saved.Clone()
	a.sufferLocked(now)
	v := a.viewLocked(now, task, peers, omitted, true)
	v.Memories = mems
	a.state = saved
	a.pending = nil // a preview reports nothing
	a.mu.Unlock()
	return a.cfg.Prompt.Assemble(v)
}
