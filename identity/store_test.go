package identity

import (
	"context"
	"fmt"
	"math"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/suffering"
)

// testStoreConformance checks the behaviour every [Store] shares.
// newStore returns an empty store.
func testStoreConformance(t *testing.T, newStore func(t *testing.T) Store) {
	ctx := context.Background()

	t.Run("empty", func(t *testing.T) {
		s := newStore(t)
		ids, err := s.List(ctx)
		require.NoError(t, err)
		assert.NotNil(t, ids)
		assert.Empty(t, ids)
		_, err = s.Load(ctx, "scout")
		require.ErrorIs(t, err, ErrNotFound)
		assert.Contains(t, err.Error(), "scout")
	})

	t.Run("round trip", func(t *testing.T) {
		s := newStore(t)
		want := sampleState("scout")
		require.NoError(t, s.Save(ctx, want))
		got, err := s.Load(ctx, "scout")
		require.NoError(t, err)
		assert.Equal(t, stateJSON(t, want, false), stateJSON(t, got, false))
	})

	t.Run("replace", func(t *testing.T) {
		s := newStore(t)
		st := sampleState("scout")
		require.NoError(t, s.Save(ctx, st))
		st.Identity.Worldview = "changed"
		st.Identity.Questions = nil
		require.NoError(t, s.Save(ctx, st))
		got, err := s.Load(ctx, "scout")
		require.NoError(t, err)
		assert.Equal(t, "changed", got.Identity.Worldview)
		assert.Empty(t, got.Identity.Questions)
	})

	t.Run("copies", func(t *testing.T) {
		s := newStore(t)
		st := sampleState("scout")
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

	t.Run("list sorted", func(t *testing.T) {
		s := newStore(t)
		for _, id := range []string{"vault", "builder", "scout", "analyst"} {
			require.NoError(t, s.Save(ctx, sampleState(id)))
		}
		ids, err := s.List(ctx)
		require.NoError(t, err)
		assert.Equal(t, []string{"analyst", "builder", "scout", "vault"}, ids)
	})

	t.Run("hostile ids", func(t *testing.T) {
		s := newStore(t)
		for _, id := range []string{"", "A", "../x", "a/b", "x\x00", "..", "/etc/passwd"} {
			_, err := s.Load(ctx, id)
			require.ErrorIs(t, err, ErrInvalidID, "Load(%q)", id)
			st := sampleState("scout")
			st.Identity.AgentID = id
			require.ErrorIs(t, s.Save(ctx, st), ErrInvalidID, "Save(%q)", id)
		}
		ids, err := s.List(ctx)
		require.NoError(t, err)
		assert.Empty(t, ids, "nothing was stored")
	})

	t.Run("invalid state refused", func(t *testing.T) {
		s := newStore(t)
		for _, sev := range []float64{1.7, -0.2, math.NaN(), math.Inf(1)} {
			st := sampleState("scout")
			st.Suffering.Active[0].Severity = sev
			err := s.Save(ctx, st)
			require.ErrorIs(t, err, suffering.ErrInvalid, "severity %v", sev)
			assert.Contains(t, err.Error(), "active[0].severity")
		}
		st := sampleState("scout")
		st.Suffering.Active[0].Type = " "
		require.ErrorIs(t, s.Save(ctx, st), suffering.ErrInvalid, "blank stressor type")
		require.Error(t, s.Save(ctx, nil))
		_, err := s.Load(ctx, "scout")
		require.ErrorIs(t, err, ErrNotFound, "nothing was stored")
	})

	t.Run("canceled context", func(t *testing.T) {
		s := newStore(t)
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		require.ErrorIs(t, s.Save(cctx, sampleState("scout")), context.Canceled)
		_, err := s.Load(cctx, "scout")
		require.ErrorIs(t, err, context.Canceled)
		_, err = s.List(cctx)
		require.ErrorIs(t, err, context.Canceled)
		_, err = s.Load(ctx, "scout")
		require.ErrorIs(t, err, ErrNotFound)
	})

	t.Run("concurrent", func(t *testing.T) {
		s := newStore(t)
		ids := []string{"scout", "analyst", "builder"}
		var wg sync.WaitGroup
		errs := make(chan error, 1000)
		for w := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range 20 {
					id := ids[(w+i)%len(ids)]
					st := sampleState(id)
					st.Identity.Worldview = fmt.Sprintf("w%d i%d", w, i)
					if err := s.Save(ctx, st); err != nil {
						errs <- err
					}
					if _, err := s.Load(ctx, id); err != nil {
						errs <- err
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
			t.Error(err)
		}
		got, err := s.List(ctx)
		require.NoError(t, err)
		assert.Equal(t, []string{"analyst", "builder", "scout"}, got)
		for _, id := range ids {
			st, err := s.Load(ctx, id)
			require.NoError(t, err)
			assert.Regexp(t, `^w\d i\d+$`, st.Identity.Worldview, "one whole version")
		}
	})
}

func TestMemoryStore(t *testing.T) {
	testStoreConformance(t, func(t *testing.T) Store { return NewMemoryStore() })
}

func TestMemoryStoreZeroValue(t *testing.T) {
	var m MemoryStore
	ctx := context.Background()
	_, err := m.Load(ctx, "scout")
	require.ErrorIs(t, err, ErrNotFound)
	require.NoError(t, m.Save(ctx, sampleState("scout")))
	ids, err := m.List(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{"scout"}, ids)
}

func TestFileStoreConformance(t *testing.T) {
	testStoreConformance(t, func(t *testing.T) Store {
		s, err := OpenFileStore(t.TempDir(), FileOptions{})
		require.NoError(t, err)
		return s
	})
}

func TestStateValidate(t *testing.T) {
	st := sampleState("scout")
	require.NoError(t, st.Validate())

	st.Identity.AgentID = "Bad"
	require.ErrorIs(t, st.Validate(), ErrInvalidID)

	st = sampleState("scout")
	st.Suffering.Resolved[0].Peak = 1.5
	err := st.Validate()
	require.ErrorIs(t, err, suffering.ErrInvalid)
	assert.Equal(t, "suffering: invalid stressor: resolved[0].peak_severity is 1.5, want 0–1", err.Error())
}

func TestStateCloneIsDeep(t *testing.T) {
	orig := sampleState("scout")
	before := stateJSON(t, orig, true)
	c := orig.Clone()
	c.Identity.Questions[0] = "x"
	c.Suffering.Active[0].Severity = 1
	c.Suffering.Resolved[0].Type = "x"
	c.Inbox[0].Text = "x"
	c.Host[0].Text = "x"
	assert.Equal(t, before, stateJSON(t, orig, true))
}

func TestCorruptErrorMatching(t *testing.T) {
	inner := fmt.Errorf("inner")
	err := fmt.Errorf("wrapped: %w", &CorruptError{Path: "/s/scout.json", Reason: "truncated", Err: inner})
	require.ErrorIs(t, err, ErrCorrupt)
	require.ErrorIs(t, err, inner)
	var ce *CorruptError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "identity: corrupt state document /s/scout.json: truncated", ce.Error())
}
