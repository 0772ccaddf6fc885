package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"

	"github.com/existence-loop/sdk/cmd/internal/storespec"
	"github.com/existence-loop/sdk/existence"
	"github.com/existence-loop/sdk/existence/event"
	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/lease"
	"github.com/existence-loop/sdk/monitor"
	"github.com/existence-loop/sdk/slot"
	"github.com/existence-loop/sdk/store/pgstore"
)

// storeSource is the monitor's view of agents that run in other
// processes: it loads every agent's stored state on each refresh and
// serves the statuses of the last one, read-only. It never saves a state
// and takes no lock. Host messages and request answers go through the
// store when it can carry them to the process that runs the agent (a
// PostgreSQL store's Send); otherwise they are refused with
// monitor.ErrUnsupported.
type storeSource struct {
	store identity.Store
	kind  string // the store spec's kind: "dir", "sqlite" or "postgres"
	log   *slog.Logger
	// observe receives the events derived from what changed between two
	// refreshes (the monitor's Observe); nil: none.
	observe event.Observer
	// loaders bounds the states loaded at once.
	loaders int

	mu       sync.RWMutex
	statuses []existence.Status      // in agent id order
	known    map[string]bool         // the ids of statuses
	seen     map[string]seenState    // what the last refresh saw of each agent
	failing  map[string]string       // agents whose last load failed: the error's text
	leases   map[string]*lease.Lease // live leases (postgres), by agent id
}

// seenState is what a refresh remembers of an agent, to tell what changed
// by the next one.
type seenState struct {
	lastGoal   string              // the newest goal's id
	lastStatus identity.GoalStatus // and its status
	worldview  string
}

var _ monitor.Source = (*storeSource)(nil)

// newStoreSource returns a source over store, whose spec is of the given
// kind; call refresh before serving it.
func newStoreSource(store identity.Store, kind string, log *slog.Logger) *storeSource {
	return &storeSource{store: store, kind: kind, log: log, loaders: 8, known: map[string]bool{}, seen: map[string]seenState{}, failing: map[string]string{}}
}

// refresh loads every agent's state from the store and replaces the
// statuses served. An agent whose state cannot be loaded keeps its last
// status (the failure is logged once, and again when it changes); an
// agent no longer listed disappears. The first refresh of an agent
// derives no event; later ones report, through observe, the goals chosen
// and ended and the worldview changed since the previous one. Errors: the
// store's listing error, or ctx's; nothing is replaced then.
func (s *storeSource) refresh(ctx context.Context) error {
	ids, err := s.store.List(ctx)
	if err != nil {
		return fmt.Errorf("listing the agents: %w", err)
	}
	slices.Sort(ids)
	states := make([]*identity.AgentState, len(ids))
	errs := make([]error, len(ids))
	sem := make(chan struct{}, max(s.loaders, 1))
	var wg sync.WaitGroup
	for i, id := range ids {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			states[i], errs[i] = s.store.Load(ctx, id)
		})
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return err
	}
	leases := s.liveLeases(ctx)

	s.mu.Lock()
	prev := map[string]existence.Status{}
	for _, st := range s.statuses {
		prev[st.ID] = st
	}
	var events []event.Event
	statuses := make([]existence.Status, 0, len(ids))
	known := make(map[string]bool, len(ids))
	seen := make(map[string]seenState, len(ids))
	for i, id := range ids {
		if err := errs[i]; err != nil {
			if errors.Is(err, identity.ErrNotFound) {
				continue // removed since the listing
			}
			if msg := err.Error(); s.failing[id] != msg {
				s.failing[id] = msg
				s.log.Warn("serve: loading an agent's state failed; showing its last status", "agent", id, "err", err)
			}
			if p, ok := prev[id]; ok {
				statuses, known[id], seen[id] = append(statuses, p), true, s.seen[id]
			}
			continue
		}
		delete(s.failing, id)
		st := existence.StatusOf(states[i])
		st.ID = id
		if l := leases[id]; l != nil {
			st.Lease = l
		}
		statuses = append(statuses, st)
		known[id] = true
		now := seenOf(states[i])
		if before, ok := s.seen[id]; ok {
			events = append(events, derive(before, states[i])...)
		}
		seen[id] = now
	}
	s.statuses, s.known, s.seen, s.leases = statuses, known, seen, leases
	s.mu.Unlock()
	if s.observe != nil {
		for _, e := range events {
			s.observe(e)
		}
	}
	return nil
}

// liveLeases returns the live leases of a PostgreSQL store (who runs each
// agent now); nil for other stores, or when they cannot be read (logged).
func (s *storeSource) liveLeases(ctx context.Context) map[string]*lease.Lease {
	pg, ok := s.store.(*pgstore.Store)
	if !ok {
		return nil
	}
	infos, err := pg.Leases(ctx)
	if err != nil {
		s.log.Warn("serve: reading the leases failed", "err", err)
		return nil
	}
	out := map[string]*lease.Lease{}
	for _, l := range infos {
		if l.Live {
			out[l.AgentID] = &lease.Lease{AgentID: l.AgentID, Epoch: l.Epoch, Owner: l.Owner, Expires: l.Expires}
		}
	}
	return out
}

// seenOf returns what a refresh remembers of st.
func seenOf(st *identity.AgentState) seenState {
	s := seenState{worldview: st.Identity.Worldview}
	if n := len(st.Identity.Goals); n > 0 {
		g := st.Identity.Goals[n-1]
		s.lastGoal, s.lastStatus = g.ID, g.Status
	}
	return s
}

// derive returns the events of what changed in st since before: the goal
// that was active and has ended, the goals chosen since (and ended, if
// they have), and a new worldview. When before's newest goal is no longer
// in the history (the state was replaced, or more goals than the history
// keeps came and went), only the worldview is compared.
func derive(before seenState, st *identity.AgentState) []event.Event {
	id, name := st.Identity.AgentID, st.Identity.Name
	ev := func(e event.Event) event.Event {
		e.AgentID, e.Agent = id, name
		return e
	}
	load := st.Suffering.Load()
	var out []event.Event
	goals := st.Identity.Goals
	start := 0
	if before.lastGoal != "" {
		k := slices.IndexFunc(goals, func(g identity.Goal) bool { return g.ID == before.lastGoal })
		if k < 0 {
			start = len(goals)
		} else {
			if g := goals[k]; g.Status != before.lastStatus && g.Status.Ended() {
				out = append(out, ev(event.Event{Kind: event.GoalEnded, Time: g.Ended, GoalStatus: g.Status, Text: g.Outcome, Goal: g.Objective}))
			}
			start = k + 1
		}
	}
	for _, g := range goals[start:] {
		e := event.Event{Kind: event.GoalChosen, Time: g.Started, Text: g.Objective, Goal: g.Objective, Load: load}
		if g.Fallback {
			// The stored cause is "{class}: {error}"; the event's is the
			// class, as on the live event.
			class, _, _ := strings.Cut(g.Cause, ": ")
			e.Reasoning, e.FailureClass = existence.FallbackReasoning, class
		}
		out = append(out, ev(e))
		if g.Status.Ended() {
			out = append(out, ev(event.Event{Kind: event.GoalEnded, Time: g.Ended, GoalStatus: g.Status, Text: g.Outcome, Goal: g.Objective}))
		}
	}
	if w := st.Identity.Worldview; w != before.worldview && w != "" {
		out = append(out, ev(event.Event{Kind: event.Worldview, Time: st.UpdatedAt, Text: w}))
	}
	return out
}

// Statuses implements monitor.Source: the statuses of the last refresh.
func (s *storeSource) Statuses(context.Context) ([]existence.Status, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return slices.Clone(s.statuses), nil
}

// Detail implements monitor.Source: it loads the agent's state now.
func (s *storeSource) Detail(ctx context.Context, id string) (existence.Status, identity.Identity, error) {
	if err := identity.ValidateID(id); err != nil {
		return existence.Status{}, identity.Identity{}, monitor.NoAgentError(id)
	}
	st, err := s.store.Load(ctx, id)
	if errors.Is(err, identity.ErrNotFound) {
		return existence.Status{}, identity.Identity{}, monitor.NoAgentError(id)
	}
	if err != nil {
		return existence.Status{}, identity.Identity{}, err
	}
	status := existence.StatusOf(st)
	status.ID = id
	s.mu.RLock()
	status.Lease = s.leases[id]
	s.mu.RUnlock()
	return status, st.Identity, nil
}

// SayAsHost implements monitor.Source: through a PostgreSQL store, the
// message waits in the database for the process that runs the agent,
// which delivers it (pgstore Relay, as existence run and swarm do).
func (s *storeSource) SayAsHost(ctx context.Context, text string, to ...string) error {
	pg, err := s.sender()
	if err != nil {
		return err
	}
	targets, err := s.targets(to)
	if err != nil {
		return err
	}
	for _, id := range targets {
		if _, err := pg.Send(ctx, id, true, identity.AgentMessage{Text: text}); err != nil {
			return err
		}
	}
	return nil
}

// DeliverToInbox implements monitor.Source, as SayAsHost does.
func (s *storeSource) DeliverToInbox(ctx context.Context, id string, m identity.AgentMessage) error {
	pg, err := s.sender()
	if err != nil {
		return err
	}
	if _, err := s.targets([]string{id}); err != nil {
		return err
	}
	_, err = pg.Send(ctx, id, false, m)
	return err
}

// sender returns the store that can carry messages to other processes.
// Errors: monitor.ErrUnsupported, saying why, for any other store.
func (s *storeSource) sender() (*pgstore.Store, error) {
	if pg, ok := s.store.(*pgstore.Store); ok {
		return pg, nil
	}
	what := map[string]string{"dir": "a directory store", "sqlite": "a SQLite store"}[s.kind]
	if what == "" {
		what = "this store"
	}
	return nil, fmt.Errorf("%w: %s cannot carry a message to an agent that runs in another process "+
		"(run the agents with -store postgres://..., or speak to them where they run: stdin, run -http, run -tui)", monitor.ErrUnsupported, what)
}

// targets returns the ids to, every known agent when to is empty.
// Errors: monitor.ErrNoAgent for an id the last refresh did not see.
func (s *storeSource) targets(to []string) ([]string, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if len(to) == 0 {
		out := make([]string, 0, len(s.statuses))
		for _, st := range s.statuses {
			out = append(out, st.ID)
		}
		return out, nil
	}
	for _, id := range to {
		if !s.known[id] {
			return nil, monitor.NoAgentError(id)
		}
	}
	return to, nil
}

var _ monitor.SlotSource = (*storeSource)(nil)

// PostSlot refuses: an agent's own board is part of its state, which the
// process that runs it owns; serve never writes a state. Post to that
// process's own monitor, or to the shared board (POST /api/slots).
func (s *storeSource) PostSlot(_ context.Context, id string, _ slot.Slot) error {
	if !s.has(id) {
		return monitor.NoAgentError(id)
	}
	return fmt.Errorf("%w: %s runs in another process, which owns its board of slots; post to that process's monitor, or to the shared board (POST /api/slots)", monitor.ErrUnsupported, id)
}

// PostSharedSlot puts s on the shared board the store keeps (its shared
// document "slots"), which the processes running the agents read (within
// a second, identity.BoardOptions.MaxAge); notify_user does not reach
// them, so their agents read it at their next heartbeat. Errors: those of
// identity.SharedBoard.Put.
func (s *storeSource) PostSharedSlot(ctx context.Context, sl slot.Slot) error {
	b, err := s.board()
	if err != nil {
		return err
	}
	_, err = b.Put(ctx, sl)
	return err
}

var _ monitor.SlotRemover = (*storeSource)(nil)

// RemoveSlot refuses, as PostSlot does: the agent's board belongs to the
// process that runs it.
func (s *storeSource) RemoveSlot(_ context.Context, id, _ string) (bool, error) {
	if !s.has(id) {
		return false, monitor.NoAgentError(id)
	}
	return false, fmt.Errorf("%w: %s runs in another process, which owns its board of slots; remove the slot through that process's monitor", monitor.ErrUnsupported, id)
}

// RemoveSharedSlot removes slotID from the shared board the store keeps;
// the processes running the agents see it gone within a second
// (identity.BoardOptions.MaxAge). Errors: those of
// identity.SharedBoard.Remove.
func (s *storeSource) RemoveSharedSlot(ctx context.Context, slotID string) (bool, error) {
	b, err := s.board()
	if err != nil {
		return false, err
	}
	return b.Remove(ctx, slotID)
}

// SharedSlots returns the store's shared board.
func (s *storeSource) SharedSlots(ctx context.Context) ([]slot.Slot, error) {
	b, err := s.board()
	if err != nil {
		return nil, err
	}
	return b.List(ctx)
}

// board returns the store's shared board.
func (s *storeSource) board() (*identity.SharedBoard, error) {
	b, ok := storespec.SharedSlots(s.store, identity.BoardOptions{})
	if !ok {
		return nil, fmt.Errorf("%w: this store keeps no shared documents", monitor.ErrUnsupported)
	}
	return b, nil
}

// has reports whether the last refresh knows agent id.
func (s *storeSource) has(id string) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.known[id]
}
