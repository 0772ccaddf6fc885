package sched

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/existence-loop/sdk/existence/event"
	"github.com/existence-loop/sdk/existence/internal/wire"
	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/llm"
	"github.com/existence-loop/sdk/prompt"
	"github.com/existence-loop/sdk/slot"
)

// ErrNoSharedBoard is returned by [Runner.PostSharedSlot] and
// [Runner.RemoveSharedSlot] when the runner has no shared board
// (RunnerConfig.SharedSlots).
var ErrNoSharedBoard = errors.New("existence: the runner has no shared board of slots (runner.Config.SharedSlots)")

// attach puts an existing agent in r (see [Runner.Add]).
func (r *Runner) attach(a wire.Agent) *node {
	n := &node{a: a}
	n.e = schedEntry{id: a.ID(), hb: a.Heartbeat(), node: n, timerIdx: -1, queueIdx: -1}
	r.mu.Lock()
	r.byID[a.ID()] = n
	r.agents = append(r.agents, a)
	r.mu.Unlock()
	p := a.Peek()
	r.book.set(a.ID(), prompt.Peer{ID: a.ID(), Name: p.Name, Narrative: p.Narrative})
	n.host.Store(p.Host)
	a.SetHooks(func() { r.wakeNode(n) }, func() { r.triggerNode(n) })
	r.smu.Lock()
	if r.started {
		r.schedule(n, r.cfg.Clock.Now())
	}
	g := r.mindGroup
	r.smu.Unlock()
	if g != nil {
		r.startAgentMinds(g, n) // added while Run runs
	}
	r.poke()
	return n
}

// mindGroup is the minds running under one Runner.Run.
type mindGroup struct {
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// startMinds starts the runner's minds and those of every agent; r.smu
// must not be held. It returns the function that stops them and waits.
func (r *Runner) startMinds(ctx context.Context) (stop func()) {
	g := &mindGroup{}
	g.ctx, g.cancel = context.WithCancel(ctx)
	r.smu.Lock()
	r.mindGroup = g
	r.smu.Unlock()
	if r.cfg.Minds != nil {
		r.cfg.Minds(g.ctx, r.mindHost(g), r.PostSharedSlot, r.emitShared)
	}
	for _, a := range r.wired() {
		r.startAgentMinds(g, r.node(a.ID()))
	}
	return func() {
		r.smu.Lock()
		r.mindGroup = nil
		r.smu.Unlock()
		g.cancel()
		g.wg.Wait()
	}
}

// startAgentMinds starts n's minds in g; they stop with g or when the
// agent is dropped (its lease lost).
func (r *Runner) startAgentMinds(g *mindGroup, n *node) {
	if n == nil || n.a.Minds() == 0 {
		return
	}
	r.smu.Lock()
	started := n.minds
	n.minds = true
	r.smu.Unlock()
	if started {
		return
	}
	ctx, cancel := context.WithCancel(g.ctx)
	var stop func() bool
	if n.ctx != nil {
		stop = context.AfterFunc(n.ctx, cancel)
	}
	g.wg.Go(func() {
		<-ctx.Done()
		if stop != nil {
			stop()
		}
		cancel()
	})
	n.a.StartMinds(ctx, r.mindHost(g))
}

// mindHost is what the runner gives the minds of g.
func (r *Runner) mindHost(g *mindGroup) wire.MindHost {
	return wire.MindHost{Group: &g.wg, Lane: func(m llm.Model) llm.Model { return laneModel{r: r, m: m} },
		Clock: r.cfg.Clock, Logger: r.cfg.Logger}
}

// SharedSlots returns the runner's shared board (RunnerConfig.SharedSlots),
// or nil.
func (r *Runner) SharedSlots() *identity.SharedBoard { return r.cfg.SharedSlots }

// PostSharedSlot puts s on the runner's shared board
// (identity.SharedBoard.Put: cleaned, stamped with the board's clock when
// UpdatedAt is zero, checked, the least important dropped beyond the
// board's cap) and reports it to the runner's Observer ([event.Slot] and
// [event.SlotDropped], with Shared set and no agent). With NotifyUser,
// every agent that sees the board (Config.SharedSlots, the runner's by
// default) is asked for a cycle at once, as [Agent.PostSlot] describes.
// Errors: [ErrNoSharedBoard]; slot.ErrInvalid (nothing changed); the
// board's errors (identity.ErrCorrupt, the store's).
func (r *Runner) PostSharedSlot(ctx context.Context, s slot.Slot) error {
	b := r.cfg.SharedSlots
	if b == nil {
		return ErrNoSharedBoard
	}
	s = s.Clean()
	if s.UpdatedAt.IsZero() {
		s.UpdatedAt = r.cfg.Clock.Now()
	}
	dropped, err := b.Put(ctx, s)
	if err != nil {
		return err
	}
	kept := true
	for _, d := range dropped {
		if d.ID == s.ID {
			kept = false
		}
		r.emitShared(event.Event{Kind: event.SlotDropped, Reason: "board_full", Slot: &d, Text: fmt.Sprintf("the shared board holds at most %d slots; this was the least important", b.Max())})
	}
	if !kept {
		return nil
	}
	r.emitShared(event.Event{Kind: event.Slot, Slot: &s, Text: s.Summary})
	if s.NotifyUser {
		for _, a := range r.wired() {
			a.NotifyShared(b)
		}
	}
	return nil
}

// RemoveSharedSlot removes the slot with id from the runner's shared board
// and reports whether there was one ([event.SlotDropped], Reason "removed").
// Errors: [ErrNoSharedBoard]; the board's errors.
func (r *Runner) RemoveSharedSlot(ctx context.Context, id string) (bool, error) {
	b := r.cfg.SharedSlots
	if b == nil {
		return false, ErrNoSharedBoard
	}
	old, _ := b.Cached(ctx)
	removed, err := b.Remove(ctx, id)
	if err != nil || !removed {
		return removed, err
	}
	s, ok := slot.Find(old, id)
	if !ok {
		s = slot.Slot{ID: id}
	}
	r.emitShared(event.Event{Kind: event.SlotDropped, Reason: "removed", Slot: &s, Text: "removed"})
	return true, nil
}

// sharedAgent is the Agent name of the events of the shared board and the
// shared minds, which belong to no agent (their AgentID is empty; their
// Shared is set).
const sharedAgent = "(shared)"

// emitShared delivers an event of the shared board (or of a shared mind)
// to the runner's Observer.
func (r *Runner) emitShared(e event.Event) {
	if r.cfg.Observer == nil && !r.subs.Any() {
		return
	}
	if e.Time.IsZero() {
		e.Time = r.cfg.Clock.Now()
	}
	e.Shared = true
	e.Agent = sharedAgent
	if e.Err != nil && e.Error == "" {
		e.Error = e.Err.Error()
	}
	if r.cfg.Observer != nil {
		r.cfg.Observer(e)
	}
	r.subs.Deliver(e)
}

// triggerNode asks the scheduler for a cycle of n now: a notifying slot
// (see schedCore.trigger).
func (r *Runner) triggerNode(n *node) {
	r.smu.Lock()
	if r.started && !n.finished && !n.lost {
		r.core.triggers++
		r.core.trigger(&n.e, r.cfg.Clock.Now())
	}
	r.smu.Unlock()
	r.poke()
}

// Subscribe adds fn as an observer of the events of every agent of the
// runner, those added later included, and of its shared board and minds,
// after [RunnerConfig].Observer and each agent's own Observer; it returns
// what removes it (calling it twice is harmless). fn is called as an
// [event.Observer] is: synchronously, possibly concurrently for different
// agents, so it must be safe for concurrent use and return quickly.
func (r *Runner) Subscribe(fn func(event.Event)) (cancel func()) { return r.subs.Add(fn) }
