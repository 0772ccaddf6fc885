package storetest

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/memory"
	"github.com/existence-loop/sdk/slot"
	"github.com/existence-loop/sdk/suffering"
)

// NewStore returns a new, empty store for one subtest. It registers its
// own cleanup (closing the store, removing files) with t.Cleanup.
type NewStore func(t *testing.T) identity.Store

// Harness gives the suite a store and the hooks that reach under the
// [identity.Store] interface. Only New is required; a nil hook skips the
// subtests that need it (t.Skip names the hook).
type Harness struct {
	// New returns a new, empty store (required).
	New NewStore
	// Corrupt damages what s stores for agentID (saved just before) so
	// that the next Load of agentID must fail with a
	// [*identity.CorruptError]: for a file store, garbage in the file; for
	// a database, an undecodable value in the agent's row.
	Corrupt func(t *testing.T, s identity.Store, agentID string)
	// FutureVersion makes the data of s look written by a newer schema
	// version than the store reads, then returns the error the store
	// gives when the data is next used: a Load of agentID for a store
	// with per-document versions, or re-opening the store for a database
	// with one schema version. The error must wrap
	// [identity.ErrFutureVersion].
	FutureVersion func(t *testing.T, s identity.Store, agentID string) error
	// Reopen returns a second, independent handle on the data of s, as
	// another process would open it (closed by its own cleanup). The
	// suite uses it to check durability across handles and the lock
	// against a second owner. Nil skips those checks.
	Reopen func(t *testing.T, s identity.Store) identity.Store
	// Document returns the named document s keeps next to the agents'
	// states (its Document method, an [identity.Document]), where the
	// shared board of slots lives. Nil skips the shared-document and
	// shared-board subtests.
	Document func(t *testing.T, s identity.Store, name string) identity.Document
}

// Run runs the conformance suite against the stores newStore returns,
// without the hooks of [Harness] (their subtests are skipped).
func Run(t *testing.T, newStore NewStore) {
	t.Helper()
	RunHarness(t, Harness{New: newStore})
}

// RunHarness runs the conformance suite with h's hooks. Each promise is a
// subtest, named as in the package doc.
func RunHarness(t *testing.T, h Harness) {
	t.Helper()
	require.NotNil(t, h.New, "storetest: Harness.New is nil")
	ctx := context.Background()

	t.Run("fixture sets every field", func(t *testing.T) {
		missing := zeroFields(reflect.ValueOf(*FullState("scout")))
		require.Empty(t, missing, "storetest.FullState leaves fields zero: %s (add them so the round trip covers them)", strings.Join(missing, ", "))
	})

	t.Run("empty", func(t *testing.T) {
		s := h.New(t)
		ids, err := s.List(ctx)
		require.NoError(t, err)
		assert.NotNil(t, ids, "List returns an empty slice, not nil")
		assert.Empty(t, ids)
		_, err = s.Load(ctx, "scout")
		require.ErrorIs(t, err, identity.ErrNotFound)
		assert.Contains(t, err.Error(), "scout", "the error names the agent")
	})

	t.Run("round trip", func(t *testing.T) {
		s := h.New(t)
		want := FullState("scout")
		require.NoError(t, s.Save(ctx, want))
		got, err := s.Load(ctx, "scout")
		require.NoError(t, err)
		assert.Equal(t, StateJSON(t, want), StateJSON(t, got), "every field survives a save and a load")
		if h.Reopen != nil {
			got, err = h.Reopen(t, s).Load(ctx, "scout")
			require.NoError(t, err)
			assert.Equal(t, StateJSON(t, want), StateJSON(t, got), "a second handle reads the same state")
		}
	})

	t.Run("working memory survives a restart and can be cleared", func(t *testing.T) {
		s := h.New(t)
		st := FullState("scout")
		require.NoError(t, s.Save(ctx, st))
		reader := s
		if h.Reopen != nil {
			reader = h.Reopen(t, s)
		}
		got, err := reader.Load(ctx, "scout")
		require.NoError(t, err)
		assert.JSONEq(t, string(st.WorkingMemory), string(got.WorkingMemory), "the working memory, byte for byte in meaning")
		assert.Equal(t, st.WorkingMemoryNote, got.WorkingMemoryNote)
		assert.True(t, st.Commissioned.Equal(got.Commissioned), "when it was commissioned")
		st.WorkingMemory, st.WorkingMemoryNote = nil, ""
		require.NoError(t, s.Save(ctx, st))
		got, err = reader.Load(ctx, "scout")
		require.NoError(t, err)
		assert.Empty(t, got.WorkingMemory, "a cleared working memory stays cleared")
		assert.Empty(t, got.WorkingMemoryNote)
	})

	t.Run("round trip of a minimal state", func(t *testing.T) {
		s := h.New(t)
		want := &identity.AgentState{Identity: identity.Identity{AgentID: "a-1_b"}}
		require.NoError(t, s.Save(ctx, want))
		got, err := s.Load(ctx, "a-1_b")
		require.NoError(t, err)
		assert.Equal(t, StateJSON(t, want), StateJSON(t, got))
	})

	t.Run("replace", func(t *testing.T) {
		s := h.New(t)
		st := FullState("scout")
		require.NoError(t, s.Save(ctx, st))
		st.Identity.Worldview = "changed"
		st.Identity.Questions = nil
		st.Identity.Goals = st.Identity.Goals[:1]
		st.Identity.Discoveries = nil
		st.Inbox = nil
		st.Slots = st.Slots[1:]
		st.Slots[0].Summary = "replaced"
		st.Host = append(st.Host, identity.AgentMessage{From: "host", Text: "second", At: t0})
		st.LastPresence = t0 // a later presence replaces the earlier one
		require.NoError(t, s.Save(ctx, st))
		got, err := s.Load(ctx, "scout")
		require.NoError(t, err)
		assert.Equal(t, StateJSON(t, st), StateJSON(t, got), "the second save replaces the first whole")
		st.LastPresence, st.Host, st.Slots = time.Time{}, nil, nil
		require.NoError(t, s.Save(ctx, st))
		got, err = s.Load(ctx, "scout")
		require.NoError(t, err)
		assert.Equal(t, StateJSON(t, st), StateJSON(t, got), "a field saved zero reads back zero")
	})

	t.Run("copies", func(t *testing.T) {
		s := h.New(t)
		st := FullState("scout")
		require.NoError(t, s.Save(ctx, st))
		st.Identity.Questions[0] = "mutated after save"
		st.Suffering.Active[0].Severity = 0.9
		a, err := s.Load(ctx, "scout")
		require.NoError(t, err)
		assert.Equal(t, "What is outside the workspace?", a.Identity.Questions[0], "Save stores a copy")
		assert.Equal(t, 0.3, a.Suffering.Active[0].Severity)
		a.Identity.Questions[0] = "mutated after load"
		a.Identity.Goals[1].BrokenTools[0] = "x"
		b, err := s.Load(ctx, "scout")
		require.NoError(t, err)
		assert.Equal(t, "What is outside the workspace?", b.Identity.Questions[0], "Load returns a copy")
		assert.Equal(t, "shell", b.Identity.Goals[1].BrokenTools[0])
	})

	t.Run("list", func(t *testing.T) {
		s := h.New(t)
		for _, id := range []string{"vault", "builder", "scout", "analyst", "a-1"} {
			require.NoError(t, s.Save(ctx, FullState(id)))
		}
		ids, err := s.List(ctx)
		require.NoError(t, err)
		assert.Equal(t, []string{"a-1", "analyst", "builder", "scout", "vault"}, ids, "lexical order")
	})

	t.Run("hostile ids", func(t *testing.T) {
		s := h.New(t)
		for _, id := range []string{"", "A", "../x", "a/b", "x\x00", "..", "/etc/passwd", "a'; DROP TABLE agents; --", strings.Repeat("a", 65)} {
			_, err := s.Load(ctx, id)
			require.ErrorIs(t, err, identity.ErrInvalidID, "Load(%q)", id)
			st := FullState("scout")
			st.Identity.AgentID = id
			require.ErrorIs(t, s.Save(ctx, st), identity.ErrInvalidID, "Save(%q)", id)
		}
		ids, err := s.List(ctx)
		require.NoError(t, err)
		assert.Empty(t, ids, "nothing was stored")
	})

	t.Run("invalid state refused", func(t *testing.T) {
		s := h.New(t)
		for _, sev := range []float64{1.7, -0.2, math.NaN(), math.Inf(1)} {
			st := FullState("scout")
			st.Suffering.Active[0].Severity = sev
			err := s.Save(ctx, st)
			require.ErrorIs(t, err, suffering.ErrInvalid, "severity %v", sev)
			assert.Contains(t, err.Error(), "active[0].severity")
		}
		st := FullState("scout")
		st.Suffering.Active[0].Type = " "
		require.ErrorIs(t, s.Save(ctx, st), suffering.ErrInvalid, "blank stressor type")
		require.Error(t, s.Save(ctx, nil))
		_, err := s.Load(ctx, "scout")
		require.ErrorIs(t, err, identity.ErrNotFound, "nothing was stored")
	})

	t.Run("caps on load", func(t *testing.T) {
		s := h.New(t)
		st := OverCapState("scout")
		require.NoError(t, s.Save(ctx, st), "an over-cap state is stored (older versions and other tools write them)")
		got, err := s.Load(ctx, "scout")
		require.NoError(t, err, "an over-cap state loads: trimmed, never refused")
		// The store may trim on load; what it returns must be the newest
		// entries, and Enforce must bring it within the caps.
		assertSuffix(t, "goals", goalIDs(st.Identity.Goals), goalIDs(got.Identity.Goals))
		assertSuffix(t, "opinions", opinionTexts(st.Identity.Opinions), opinionTexts(got.Identity.Opinions))
		assertSuffix(t, "questions", st.Identity.Questions, got.Identity.Questions)
		assertSuffix(t, "discoveries", discoveryTexts(st.Identity.Discoveries), discoveryTexts(got.Identity.Discoveries))
		got.Identity.Enforce(identity.DefaultLimits())
		l := identity.DefaultLimits()
		assert.Len(t, got.Identity.Goals, l.Goals)
		assert.Equal(t, st.Identity.Goals[len(st.Identity.Goals)-1].ID, got.Identity.Goals[l.Goals-1].ID, "the newest goal is kept")
		assert.Len(t, got.Identity.Opinions, l.Opinions)
		assert.Len(t, got.Identity.Questions, l.Questions)
		assert.Len(t, got.Identity.Discoveries, l.Discoveries)
	})

	t.Run("canceled context", func(t *testing.T) {
		s := h.New(t)
		require.NoError(t, s.Save(ctx, FullState("analyst")))
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		require.ErrorIs(t, s.Save(cctx, FullState("scout")), context.Canceled)
		_, err := s.Load(cctx, "analyst")
		require.ErrorIs(t, err, context.Canceled)
		_, err = s.List(cctx)
		require.ErrorIs(t, err, context.Canceled)
		_, err = s.Load(ctx, "scout")
		require.ErrorIs(t, err, identity.ErrNotFound, "a canceled save stores nothing")
		dctx, dcancel := context.WithDeadline(ctx, time.Unix(0, 0))
		defer dcancel()
		require.ErrorIs(t, s.Save(dctx, FullState("scout")), context.DeadlineExceeded)
	})

	t.Run("concurrent saves of different agents", func(t *testing.T) {
		s := h.New(t)
		const agents, rounds = 12, 10
		var wg sync.WaitGroup
		errs := make(chan error, agents*rounds*3)
		for w := range agents {
			wg.Add(1)
			go func() {
				defer wg.Done()
				id := fmt.Sprintf("agent-%02d", w)
				for i := range rounds {
					st := FullState(id)
					st.Identity.Worldview = fmt.Sprintf("%s round %d", id, i)
					st.Identity.Goals = append(st.Identity.Goals[:len(st.Identity.Goals)-1], identity.Goal{
						ID: fmt.Sprintf("g-%d", i), Objective: "round", Status: identity.Active, Started: t0})
					if err := s.Save(ctx, st); err != nil {
						errs <- err
					}
					got, err := s.Load(ctx, id)
					if err != nil {
						errs <- err
					} else if got.Identity.Worldview != st.Identity.Worldview {
						errs <- fmt.Errorf("%s: read %q after saving %q", id, got.Identity.Worldview, st.Identity.Worldview)
					}
					if _, err := s.List(ctx); err != nil {
						errs <- err
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			assert.NoError(t, err)
		}
		ids, err := s.List(ctx)
		require.NoError(t, err)
		require.Len(t, ids, agents)
		for _, id := range ids {
			st, err := s.Load(ctx, id)
			require.NoError(t, err)
			want := fmt.Sprintf("%s round %d", id, rounds-1)
			assert.Equal(t, want, st.Identity.Worldview, "the last save of each agent is kept")
			assert.Equal(t, fmt.Sprintf("g-%d", rounds-1), st.Identity.Goals[len(st.Identity.Goals)-1].ID, "one whole version")
		}
	})

	t.Run("concurrent saves of one agent", func(t *testing.T) {
		s := h.New(t)
		var wg sync.WaitGroup
		for w := range 6 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range 5 {
					st := FullState("scout")
					st.Identity.Worldview = fmt.Sprintf("w%d i%d", w, i)
					st.Identity.Narrative = st.Identity.Worldview
					assert.NoError(t, s.Save(ctx, st))
				}
			}()
		}
		wg.Wait()
		st, err := s.Load(ctx, "scout")
		require.NoError(t, err)
		assert.Regexp(t, `^w\d i\d$`, st.Identity.Worldview)
		assert.Equal(t, st.Identity.Worldview, st.Identity.Narrative, "one whole version, never a mix")
	})

	t.Run("lock against a second owner", func(t *testing.T) {
		s := h.New(t)
		l, ok := s.(identity.Locker)
		if !ok {
			t.Skipf("%T is not an identity.Locker", s)
		}
		_, err := l.Lock("../x")
		require.ErrorIs(t, err, identity.ErrInvalidID)
		unlock, err := l.Lock("scout")
		require.NoError(t, err)
		checkLocked := func(l identity.Locker, who string) {
			t.Helper()
			_, err := l.Lock("scout")
			require.ErrorIs(t, err, identity.ErrLocked, who)
			var le *identity.LockedError
			require.ErrorAs(t, err, &le, who)
			assert.Equal(t, "scout", le.AgentID, who)
			assert.Contains(t, err.Error(), `"scout"`, "%s: the error names the agent", who)
		}
		checkLocked(l, "a second Lock on the same handle")
		var other identity.Locker
		if h.Reopen != nil {
			o, ok := h.Reopen(t, s).(identity.Locker)
			require.True(t, ok, "the second handle is a Locker too")
			other = o
			checkLocked(other, "a second handle (another process)")
		}
		u2, err := l.Lock("analyst")
		require.NoError(t, err, "other agents are not locked")
		require.NoError(t, u2())
		require.NoError(t, s.Save(ctx, FullState("scout")), "the holder saves")
		require.NoError(t, unlock())
		require.NoError(t, unlock(), "a second unlock is harmless")
		if other != nil {
			u3, err := other.Lock("scout")
			require.NoError(t, err, "the lock is free once released")
			checkLockedBy := func() {
				_, err := l.Lock("scout")
				require.ErrorIs(t, err, identity.ErrLocked)
			}
			checkLockedBy()
			require.NoError(t, u3())
		}
		u4, err := l.Lock("scout")
		require.NoError(t, err, "the lock can be taken again")
		require.NoError(t, u4())
	})

	t.Run("corrupt data named", func(t *testing.T) {
		if h.Corrupt == nil {
			t.Skip("Harness.Corrupt is nil")
		}
		s := h.New(t)
		require.NoError(t, s.Save(ctx, FullState("scout")))
		require.NoError(t, s.Save(ctx, FullState("analyst")))
		h.Corrupt(t, s, "scout")
		_, err := s.Load(ctx, "scout")
		require.ErrorIs(t, err, identity.ErrCorrupt)
		var ce *identity.CorruptError
		require.ErrorAs(t, err, &ce)
		assert.Contains(t, ce.Path, "scout", "the error names the agent's file or row")
		assert.NotEmpty(t, ce.Reason, "the error says what is wrong")
		err = s.Save(ctx, FullState("scout"))
		require.Error(t, err, "a corrupt document is never replaced silently")
		assert.ErrorIs(t, err, identity.ErrCorrupt)
		_, err = s.Load(ctx, "scout")
		require.ErrorIs(t, err, identity.ErrCorrupt, "still there, still corrupt")
		other, err := s.Load(ctx, "analyst")
		require.NoError(t, err, "other agents are untouched")
		assert.Equal(t, StateJSON(t, FullState("analyst")), StateJSON(t, other))
		ids, err := s.List(ctx)
		require.NoError(t, err)
		assert.Contains(t, ids, "analyst")
		q, ok := s.(identity.Quarantiner)
		if !ok {
			return
		}
		where, err := q.Quarantine("scout")
		require.NoError(t, err)
		assert.NotEmpty(t, where, "Quarantine says where the data went")
		_, err = s.Load(ctx, "scout")
		require.ErrorIs(t, err, identity.ErrNotFound, "quarantined data is gone from its place")
		require.NoError(t, s.Save(ctx, FullState("scout")), "a fresh start after the quarantine")
		_, err = s.Load(ctx, "scout")
		require.NoError(t, err)
		_, err = q.Quarantine("nobody")
		require.ErrorIs(t, err, identity.ErrNotFound)
	})

	t.Run("newer schema version refused", func(t *testing.T) {
		if h.FutureVersion == nil {
			t.Skip("Harness.FutureVersion is nil")
		}
		s := h.New(t)
		require.NoError(t, s.Save(ctx, FullState("scout")))
		err := h.FutureVersion(t, s, "scout")
		require.ErrorIs(t, err, identity.ErrFutureVersion)
		assert.Contains(t, err.Error(), "version", "the error says why")
	})

	t.Run("memories", func(t *testing.T) {
		if _, ok := h.New(t).(memory.Store); !ok {
			t.Skip("the store does not implement memory.Store")
		}
		RunMemory(t, h)
	})
	runShared(t, h)
}

// t0 is the fixed instant of the fixtures.
var t0 = time.Date(2026, 11, 21, 22, 23, 0, 0, time.UTC)

// FullState returns a state of agent id that sets every field of
// [identity.AgentState] (checked by the suite), with multi-byte text, HTML
// characters and quotes that a naive encoder would mangle.
func FullState(id string) *identity.AgentState {
	return &identity.AgentState{
		Identity: identity.Identity{
			AgentID:   id,
			Name:      "Cedar",
			Traits:    []string{"curious", "methodical"},
			Domains:   []string{"exploration", "mapping"},
			Worldview: "Maps before moves — the workspace rewards patience. 日本語 ✓ 'quoted' \"double\"",
			Opinions: []identity.Opinion{
				{Text: "Small tools beat big plans.", Domain: "engineering", Formed: t0.Add(-48 * time.Hour)},
				{Text: "Peers notice <useful> things & say so.", Domain: "social", Formed: t0.Add(-24 * time.Hour)},
			},
			Questions: []string{"What is outside the workspace?", "Why do goals stall?"},
			Narrative: "[2026-11-20] Completed: map the workspace. [2026-11-21] Failed: index the logs.",
			Discoveries: []identity.Discovery{
				{Text: "The logs rotate hourly.", Source: "workspace/logs", At: t0.Add(-time.Hour)},
				{Text: "An index exists.", Source: "design/index.md", At: t0.Add(-30 * time.Minute)},
			},
			Goals: []identity.Goal{
				{ID: "g1", Objective: "map the workspace", Status: identity.Done,
					Started: t0.Add(-50 * time.Hour), Ended: t0.Add(-49 * time.Hour), Outcome: "a map of 12 directories",
					Artifacts: []string{"scout/map.md"}},
				{ID: "g2", Objective: "index the logs", Status: identity.Failed, Started: t0.Add(-26 * time.Hour),
					Ended: t0.Add(-25 * time.Hour), Outcome: "permission denied", BrokenTools: []string{"shell"}},
				{ID: "g3", Objective: "explore the workspace and build something useful", Status: identity.Active,
					Started: t0.Add(-time.Minute), Fallback: true, Cause: "LLM unavailable", TaskID: "t7"},
			},
			CreatedAt: t0.Add(-72 * time.Hour),
		},
		Suffering: suffering.State{
			Active: []suffering.Stressor{
				{Type: suffering.RepeatedFailure, Description: "goals keep failing", Severity: 0.3, Peak: 0.35,
					RatePerDay: 0.04, Condition: "bring the failure rate below 30%", Onset: t0.Add(-30 * time.Hour)},
				{Type: suffering.Futility, Description: "nothing is used", Severity: 0.25, Peak: 0.25,
					RatePerDay: 0.025, Condition: "someone uses an artifact", Onset: t0.Add(-20 * time.Hour)},
			},
			Resolved: []suffering.Stressor{
				{Type: suffering.Invisibility, Description: "no peer replied", Severity: 0.6, Peak: 0.62,
					RatePerDay: 0.03, Condition: "a peer replies", Onset: t0.Add(-70 * time.Hour),
					ResolvedAt: t0.Add(-60 * time.Hour), Resolution: "Vault replied"},
			},
			LastEscalated: t0.Add(-6 * time.Second),
			CrisisCycles:  1,
		},
		Inbox:        []identity.AgentMessage{{From: "Cipher", Text: "found a pattern in the logs", At: t0.Add(-2 * time.Minute)}},
		Host:         []identity.AgentMessage{{From: "host", Text: "hello, Cedar", At: t0.Add(-3 * time.Minute)}},
		LastPresence: t0.Add(-3 * time.Minute), // the host message's arrival (spec §2 "Presence")
		Slots: []slot.Slot{
			{ID: "weather", Title: "Weather", Status: slot.Completed, Summary: "Temperature dropping 5°C — <soon> & \"fast\"",
				Importance: 0.8, Confidence: 0.95, NextRun: 3600, NotifyUser: true, UpdatedAt: t0.Add(-10 * time.Minute)},
			{ID: "feed:news", Title: "Nachrichten 日本語", Status: slot.Pending, Summary: "checking",
				Importance: 0.25, NextRun: 1800.5, UpdatedAt: t0.Add(-time.Minute)},
		},
		WorkingMemory:     json.RawMessage(`{"current_goal":"map the workspace — « tout »","progress":{"stage":"reading","completed":["design/"],"actions_in_stage":3},"lessons":["read before writing"]}`),
		WorkingMemoryNote: "it was 2400 bytes, over your cap of 2000 bytes",
		Commissioned:      t0.Add(-72 * time.Hour),
		UpdatedAt:         t0,
	}
}

// OverCapState returns a state of agent id above the default caps: 150
// goals, 30 opinions, 20 questions, 30 discoveries (ids and texts numbered
// oldest first).
func OverCapState(id string) *identity.AgentState {
	st := FullState(id)
	ident := &st.Identity
	ident.Goals = nil
	for i := range 150 {
		ident.Goals = append(ident.Goals, identity.Goal{ID: fmt.Sprintf("g%03d", i), Objective: fmt.Sprintf("goal %d", i),
			Status: identity.Done, Started: t0.Add(time.Duration(i) * time.Minute), Ended: t0.Add(time.Duration(i)*time.Minute + time.Second)})
	}
	ident.Opinions = nil
	for i := range 30 {
		ident.Opinions = append(ident.Opinions, identity.Opinion{Text: fmt.Sprintf("opinion %d", i), Domain: "d", Formed: t0})
	}
	ident.Questions = nil
	for i := range 20 {
		ident.Questions = append(ident.Questions, fmt.Sprintf("question %d", i))
	}
	ident.Discoveries = nil
	for i := range 30 {
		ident.Discoveries = append(ident.Discoveries, identity.Discovery{Text: fmt.Sprintf("discovery %d", i), Source: fmt.Sprintf("src/%d", i), At: t0})
	}
	return st
}

// StateJSON returns the indented JSON of s without UpdatedAt (which stores
// stamp) and with the working memory's keys sorted (a store keeps the
// object, not its bytes), for comparisons with readable diffs.
func StateJSON(t testing.TB, s *identity.AgentState) string {
	t.Helper()
	require.NotNil(t, s)
	c := s.Clone()
	c.UpdatedAt = time.Time{}
	if len(c.WorkingMemory) > 0 {
		// A store keeps the working memory's object, not its bytes
		// (PostgreSQL's jsonb orders keys its own way): compared with
		// its keys sorted.
		var v any
		require.NoError(t, json.Unmarshal(c.WorkingMemory, &v), "the working memory is JSON")
		wm, err := json.Marshal(v)
		require.NoError(t, err)
		c.WorkingMemory = wm
	}
	b, err := json.MarshalIndent(c, "", "  ")
	require.NoError(t, err)
	return string(b)
}

// zeroFields lists the exported fields of the struct types below v (named
// "Type.Field") that no value below v sets.
func zeroFields(v reflect.Value) []string {
	all, set := map[string]bool{}, map[string]bool{}
	var walk func(v reflect.Value)
	walk = func(v reflect.Value) {
		switch v.Kind() {
		case reflect.Struct:
			if v.Type() == reflect.TypeFor[time.Time]() {
				return
			}
			for i := range v.NumField() {
				f := v.Type().Field(i)
				if !f.IsExported() {
					continue
				}
				key := v.Type().Name() + "." + f.Name
				all[key] = true
				if !v.Field(i).IsZero() {
					set[key] = true
				}
				walk(v.Field(i))
			}
		case reflect.Slice:
			for i := range v.Len() {
				walk(v.Index(i))
			}
		}
	}
	walk(v)
	var out []string
	for k := range all {
		if !set[k] {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

func assertSuffix(t *testing.T, what string, saved, loaded []string) {
	t.Helper()
	assert.True(t, len(loaded) <= len(saved) && slicesEqual(saved[len(saved)-len(loaded):], loaded),
		"%s: loaded %d entries that are not the newest of the %d saved: %v", what, len(loaded), len(saved), loaded)
}

func slicesEqual(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func goalIDs(gs []identity.Goal) []string {
	out := make([]string, len(gs))
	for i, g := range gs {
		out[i] = g.ID
	}
	return out
}

func opinionTexts(os []identity.Opinion) []string {
	out := make([]string, len(os))
	for i, o := range os {
		out[i] = o.Text
	}
	return out
}

func discoveryTexts(ds []identity.Discovery) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = d.Text
	}
	return out
}
