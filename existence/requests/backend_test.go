package requests_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/existence/requests"
	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/internal/pgtest"
	"github.com/existence-loop/sdk/store/pgstore"
	"github.com/existence-loop/sdk/store/sqlitestore"
)

// place is one place a queue can live: open returns a fresh queue on it
// (a reopen, for the durable ones), raw writes the stored bytes directly
// (nil for memory), durable says whether a reopen sees earlier requests.
type place struct {
	name    string
	open    func(t *testing.T) *requests.Queue
	raw     func(t *testing.T, data []byte)
	durable bool
}

var t1 = time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)

func opts() requests.Options { return requests.Options{Now: func() time.Time { return t1 }} }

// places returns the four backends: memory, file, SQLite and PostgreSQL
// (skipped with one line when PostgreSQL is not installed).
func places(t *testing.T) []place {
	mem := requests.NewMemory(opts())
	dir := t.TempDir()
	dbPath := filepath.Join(t.TempDir(), "state.db")
	ps := []place{
		{name: "memory", open: func(*testing.T) *requests.Queue { return mem }},
		{name: "file", durable: true, open: func(t *testing.T) *requests.Queue {
			q, err := requests.Open(dir, opts())
			require.NoError(t, err)
			return q
		}},
		{name: "sqlite", durable: true, open: func(t *testing.T) *requests.Queue {
			s, err := sqlitestore.Open(context.Background(), dbPath, sqlitestore.Options{})
			require.NoError(t, err)
			t.Cleanup(func() { require.NoError(t, s.Close()) })
			q, err := requests.OpenBackend(context.Background(), s.Document("requests"), opts())
			require.NoError(t, err)
			return q
		}, raw: func(t *testing.T, data []byte) {
			s, err := sqlitestore.Open(context.Background(), dbPath, sqlitestore.Options{})
			require.NoError(t, err)
			defer s.Close()
			require.NoError(t, s.Document("requests").Update(context.Background(), func([]byte) ([]byte, error) { return data, nil }))
		}},
	}
	pgURL := ""
	ps = append(ps, place{name: "postgres", durable: true, open: func(t *testing.T) *requests.Queue {
		if pgURL == "" {
			pgURL = pgtest.New(t)
		}
		s, err := pgstore.Open(context.Background(), pgURL, pgstore.Options{})
		require.NoError(t, err)
		t.Cleanup(s.Close)
		q, err := requests.OpenBackend(context.Background(), s.Document("requests"), opts())
		require.NoError(t, err)
		return q
	}, raw: func(t *testing.T, data []byte) {
		s, err := pgstore.Open(context.Background(), pgURL, pgstore.Options{})
		require.NoError(t, err)
		defer s.Close()
		require.NoError(t, s.Document("requests").Update(context.Background(), func([]byte) ([]byte, error) { return data, nil }))
	}})
	return ps
}

type inbox struct{ got []identity.AgentMessage }

func (i *inbox) DeliverToInbox(_ context.Context, m identity.AgentMessage) error {
	i.got = append(i.got, m)
	return nil
}

// TestBackends runs one request lifecycle (submit, list, answer, deliver,
// reopen) on every backend, then two queues on one store submitting at
// once, then a corrupt stored document (a *identity.CorruptError).
func TestBackends(t *testing.T) {
	ctx := context.Background()
	for _, p := range places(t) {
		t.Run(p.name, func(t *testing.T) {
			q := p.open(t)
			a, err := q.Submit(ctx, "scout", requests.Approval, "may I delete old notes?")
			require.NoError(t, err)
			b, err := q.Submit(ctx, "builder", requests.Question, "which format?")
			require.NoError(t, err)
			assert.Equal(t, []string{"req-000001", "req-000002"}, []string{a.ID, b.ID})

			open, err := q.List(ctx, requests.Filter{Status: requests.Pending})
			require.NoError(t, err)
			assert.Equal(t, []requests.Request{a, b}, open)

			got, err := q.Answer(ctx, "#2", requests.Answered, "markdown")
			require.NoError(t, err)
			assert.Equal(t, requests.Answered, got.Status)
			assert.Equal(t, t1, got.Ended)
			_, err = q.Answer(ctx, "2", requests.Answered, "again")
			assert.ErrorIs(t, err, requests.ErrEnded)
			_, err = q.Get(ctx, "req-000009")
			assert.ErrorIs(t, err, requests.ErrNotFound)
			var in inbox
			require.NoError(t, requests.Deliver(ctx, &in, got))
			require.Len(t, in.got, 1)
			assert.Contains(t, in.got[0].Text, "markdown")

			again := p.open(t)
			all, err := again.List(ctx, requests.Filter{})
			require.NoError(t, err)
			assert.Equal(t, []requests.Request{a, got}, all, "the reopened queue sees both")
			c, err := again.Submit(ctx, "scout", requests.BuildRequest, "a scanner")
			require.NoError(t, err)
			assert.Equal(t, "req-000003", c.ID, "ids are never reused")

			if !p.durable {
				return
			}
			// Two queues on the same store, as two processes would have:
			// every submit gets its own id, none is lost.
			q1, q2 := p.open(t), p.open(t)
			var wg sync.WaitGroup
			for i := range 8 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					q := q1
					if i%2 == 1 {
						q = q2
					}
					_, err := q.Submit(ctx, fmt.Sprintf("agent%d", i), requests.Question, "q")
					assert.NoError(t, err)
				}()
			}
			wg.Wait()
			all, err = p.open(t).List(ctx, requests.Filter{})
			require.NoError(t, err)
			assert.Len(t, all, 11)
			seen := map[string]bool{}
			for _, r := range all {
				seen[r.ID] = true
			}
			assert.Len(t, seen, 11, "unique ids")

			if p.raw == nil {
				return
			}
			p.raw(t, []byte(`{"version":1,"seq":1,"requests":[],"extra":1}`))
			_, err = q.Submit(ctx, "scout", requests.Question, "x")
			var ce *identity.CorruptError
			require.ErrorAs(t, err, &ce)
			assert.ErrorIs(t, err, identity.ErrCorrupt)
			assert.Contains(t, ce.Path, "#requests")
			assert.Contains(t, ce.Reason, `unknown field "extra"`)
			_, err = requests.OpenBackend(ctx, nil, opts())
			assert.ErrorIs(t, err, requests.ErrInvalid)
		})
	}
}
