package pgstore_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/internal/pgtest"
	"github.com/existence-loop/sdk/store/pgstore"
)

func TestSaveLoadList(t *testing.T) {
	ctx := context.Background()
	s := open(t, pgtest.New(t), "a", 0)
	_, err := s.Load(ctx, "scout")
	require.ErrorIs(t, err, identity.ErrNotFound, "Load of nothing")
	for _, id := range []string{"b-1", "a_2", "a-1", "scout"} {
		require.NoError(t, s.Save(ctx, state(id, "I am "+id+" \x00 with a NUL")))
	}
	got, err := s.Load(ctx, "a_2")
	require.NoError(t, err)
	require.Equal(t, "I am a_2 \x00 with a NUL", got.Identity.Narrative, "loaded %+v", got.Identity)
	require.True(t, got.UpdatedAt.Equal(t0), "loaded UpdatedAt %v, want %v", got.UpdatedAt, t0)
	ids, err := s.List(ctx)
	require.NoError(t, err)
	require.Equal(t, "a-1 a_2 b-1 scout", strings.Join(ids, " "), "List (byte order)")
	_, err = s.Load(ctx, "../x")
	require.ErrorIs(t, err, identity.ErrInvalidID, "Load of a bad id")
	bad := state("scout", "")
	bad.Identity.AgentID = "Bad Id"
	require.ErrorIs(t, s.Save(ctx, bad), identity.ErrInvalidID, "Save of a bad id")
}

func TestLoadRefusesCorruptAndNewerDocuments(t *testing.T) {
	ctx := context.Background()
	s := open(t, pgtest.New(t), "a", 0)
	for _, id := range []string{"trunc", "other", "newer", "nan"} {
		require.NoError(t, s.Save(ctx, state(id, "")))
	}
	for _, q := range []string{
		`UPDATE existence_states SET doc = substr(doc, 1, 20) WHERE agent_id = 'trunc'`,
		`UPDATE existence_states SET doc = convert_to(replace(convert_from(doc, 'UTF8'), '"other"', '"someone"'), 'UTF8') WHERE agent_id = 'other'`,
		`UPDATE existence_states SET doc_version = 99 WHERE agent_id = 'newer'`,
	} {
		_, err := s.Pool().Exec(ctx, q)
		require.NoError(t, err)
	}
	for id, want := range map[string]error{"trunc": identity.ErrCorrupt, "other": identity.ErrCorrupt, "newer": identity.ErrFutureVersion} {
		_, err := s.Load(ctx, id)
		assert.ErrorIs(t, err, want, "Load(%s)", id)
		t.Logf("%s: %v", id, err)
	}
}

func TestSaveTooLarge(t *testing.T) {
	ctx := context.Background()
	s, err := pgstore.Open(ctx, pgtest.New(t), pgstore.Options{MaxBytes: 1000})
	require.NoError(t, err)
	defer s.Close()
	require.ErrorIs(t, s.Save(ctx, state("big", strings.Repeat("x", 2000))), identity.ErrTooLarge, "Save")
}

func TestOpenErrors(t *testing.T) {
	ctx := context.Background()
	url := pgtest.New(t)
	tests := []struct {
		name string
		url  string
		want error
	}{
		{"bad connection string", "postgres://a b@:what", pgstore.ErrConfig},
		{"unreachable server", "postgres://postgres@127.0.0.1:1/x?sslmode=disable&connect_timeout=2", pgstore.ErrUnreachable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			_, err := pgstore.Open(ctx, tt.url, pgstore.Options{ConnectTimeout: 3 * time.Second})
			require.ErrorIs(t, err, tt.want, "Open")
			assert.LessOrEqual(t, time.Since(start), 5*time.Second, "Open took too long: retrying?")
			t.Log(err)
		})
	}
	t.Run("newer schema", func(t *testing.T) {
		s := open(t, url, "a", 0)
		_, err := s.Pool().Exec(ctx, `INSERT INTO existence_migrations (version) VALUES (99)`)
		require.NoError(t, err)
		_, err = pgstore.Open(ctx, url, pgstore.Options{})
		require.ErrorIs(t, err, pgstore.ErrSchemaTooNew, "Open")
		t.Log(err)
	})
}

func TestConcurrentStartsMigrateOnce(t *testing.T) {
	ctx := context.Background()
	url := pgtest.New(t)
	var wg sync.WaitGroup
	errs := make([]error, 6)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := pgstore.Open(ctx, url, pgstore.Options{Owner: fmt.Sprint(i)})
			if err == nil {
				s.Close()
			}
			errs[i] = err
		}()
	}
	wg.Wait()
	require.NoError(t, errors.Join(errs...))
	s := open(t, url, "check", 0)
	var n int
	require.NoError(t, s.Pool().QueryRow(ctx, `SELECT count(*) FROM existence_migrations`).Scan(&n))
	require.Equal(t, pgstore.SchemaVersion, n, "migrations recorded")
}
