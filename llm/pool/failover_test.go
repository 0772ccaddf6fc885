package pool_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/llm"
	"github.com/existence-loop/sdk/llm/middleware"
	"github.com/existence-loop/sdk/llm/ollama"
	"github.com/existence-loop/sdk/llm/pool"
)

// TestRetryFailsOverWithoutBackoff: a pool of two, one server hangs. A
// retry whose next attempt goes to the other, healthy server waits no
// backoff: at once when the failed attempt marked its server down, and
// as soon as another call marks it down while the retry waits. The
// retry's Sleep records the waits and, in the second case, marks the
// server down itself by a second agent's call; it ends only by its
// context, so a wait that is not cut short fails the test (after 10 s,
// not the backoff's 5 s: the Sleep fake never sleeps the backoff).
func TestRetryFailsOverWithoutBackoff(t *testing.T) {
	const timeout = 500 * time.Millisecond
	hung := ollamaServer(t, "hang")
	ok := ollamaServer(t, "ok")
	for _, tc := range []struct {
		name     string
		failures int
		// marks reports that the Sleep fake must mark the server down
		// (failures > 1: the first attempt's timeout does not).
		marks bool
	}{
		{name: "marked down by the attempt", failures: 1},
		{name: "marked down while waiting", failures: 2, marks: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := poolFailures(t, tc.failures, hung, ok)
			var onHung []string // agents pinned to the hung server
			for i := 0; len(onHung) < 2; i++ {
				if id := fmt.Sprintf("agent-%02d", i); p.Rank(id)[0] == hung {
					onHung = append(onHung, id)
				}
			}
			agent, other := onHung[0], onHung[1]
			var (
				mu    sync.Mutex
				waits []time.Duration
			)
			sleep := func(ctx context.Context, d time.Duration) error {
				mu.Lock()
				waits = append(waits, d)
				mu.Unlock()
				if d == 0 {
					return ctx.Err()
				}
				if tc.marks {
					_, err := middleware.WithTimeout(p, timeout).Generate(pool.WithAgent(context.Background(), other), &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}})
					require.Error(t, err, "the other agent's call times out on the hung server")
				}
				select {
				case <-ctx.Done():
					return ctx.Err()
				case <-time.After(10 * time.Second):
					t.Error("the backoff was not cut short")
					return nil
				}
			}
			m := middleware.WithRetry(middleware.WithTimeout(p, timeout), middleware.RetryPolicy{Sleep: sleep, Jitter: -1})
			start := time.Now()
			resp, err := m.Generate(pool.WithAgent(context.Background(), agent), &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}})
			took := time.Since(start)
			require.NoError(t, err)
			assert.Equal(t, ok, resp.Server, "the retry went to the healthy server")
			mu.Lock()
			defer mu.Unlock()
			require.Len(t, waits, 1, "one retry")
			if tc.marks {
				assert.Equal(t, middleware.DefaultWait, waits[0], "the backoff began, and was cut short")
				assert.Less(t, took, 3*timeout+2*time.Second, "within the two timeouts and a small bound")
			} else {
				assert.Zero(t, waits[0], "no backoff once the agent's server is down")
				assert.Less(t, took, timeout+2*time.Second, "within the timeout and a small bound")
			}
			assert.Equal(t, hung, p.Rank(agent)[0], "still pinned to the hung server, which is down")
		})
	}
}

// A retry on the same server (its only one) waits the backoff.
func TestRetryWaitsOnTheSameServer(t *testing.T) {
	p := poolFailures(t, 1, ollamaServer(t, "hang"))
	var waits []time.Duration
	sleep := func(ctx context.Context, d time.Duration) error { waits = append(waits, d); return ctx.Err() }
	m := middleware.WithRetry(middleware.WithTimeout(p, 200*time.Millisecond), middleware.RetryPolicy{Attempts: 2, Sleep: sleep, Jitter: -1})
	_, err := m.Generate(pool.WithAgent(context.Background(), "a"), &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}})
	require.Error(t, err)
	assert.Equal(t, []time.Duration{middleware.DefaultWait}, waits, "no other server: the full backoff")
}

// poolFailures is pool with Failures set.
func poolFailures(t *testing.T, failures int, urls ...string) *pool.Pool {
	t.Helper()
	var servers []pool.Server
	for _, u := range urls {
		m, err := ollama.New(ollama.Config{URL: u, Model: "m"})
		require.NoError(t, err)
		servers = append(servers, pool.Server{Name: u, Model: m})
	}
	now := time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC)
	p, err := pool.New(pool.Config{Servers: servers, Failures: failures, Now: func() time.Time { return now }})
	require.NoError(t, err)
	return p
}
