package taskqueue

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/task"
)

var t0 = time.Date(2025, 3, 1, 9, 0, 0, 0, time.UTC)

// fakeClock is a clock the test moves by hand; safe for concurrent use.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *fakeClock { return &fakeClock{t: t0} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// eachBackend runs fn against a memory queue and a file queue with opts,
// each with its own fake clock starting at t0.
func eachBackend(t *testing.T, opts Options, fn func(t *testing.T, q *Queue, clock *fakeClock)) {
	t.Helper()
	t.Run("memory", func(t *testing.T) {
		clock := newClock()
		opts.Now = clock.Now
		fn(t, NewMemory(opts), clock)
	})
	t.Run("file", func(t *testing.T) {
		clock := newClock()
		opts.Now = clock.Now
		q, err := Open(t.TempDir(), opts)
		require.NoError(t, err)
		fn(t, q, clock)
	})
}

func TestLifecycle(t *testing.T) {
	ctx := context.Background()
	eachBackend(t, Options{}, func(t *testing.T, q *Queue, clock *fakeClock) {
		sub, err := q.Submit(ctx, "  Summarise the logs  ", "")
		require.NoError(t, err)
		assert.Equal(t, task.Task{ID: "task-000001", Description: "Summarise the logs", Status: task.Pending, Submitted: t0}, sub)

		got, err := q.Next(ctx, "cedar")
		require.NoError(t, err)
		require.NotNil(t, got)
		assert.Equal(t, task.Task{ID: "task-000001", Description: "Summarise the logs", Status: task.Assigned, AssignedTo: "cedar", Submitted: t0, Assigned: t0}, *got)

		done, err := q.Finish(ctx, sub.ID, true, "wrote summary.md")
		require.NoError(t, err)
		assert.Equal(t, task.Completed, done.Status)
		assert.Equal(t, "wrote summary.md", done.Result)
		assert.Equal(t, t0, done.Ended)

		stored, err := q.Get(ctx, sub.ID)
		require.NoError(t, err)
		assert.Equal(t, done, stored)

		none, err := q.Next(ctx, "cedar")
		require.NoError(t, err)
		assert.Nil(t, none)
	})
}

func TestFinish(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name string
		// setup returns the id to finish.
		setup      func(t *testing.T, q *Queue, clock *fakeClock) string
		ok         bool
		wantErr    error
		wantStatus task.Status
		wantResult string
	}{
		{
			name:       "assigned ok completes",
			setup:      submitAndClaim,
			ok:         true,
			wantStatus: task.Completed,
			wantResult: "result",
		},
		{
			name:       "assigned not ok fails",
			setup:      submitAndClaim,
			wantStatus: task.Failed,
			wantResult: "result",
		},
		{
			name: "pending is not assigned",
			setup: func(t *testing.T, q *Queue, _ *fakeClock) string {
				tk, err := q.Submit(ctx, "do it", "")
				require.NoError(t, err)
				return tk.ID
			},
			ok:         true,
			wantErr:    task.ErrNotAssigned,
			wantStatus: task.Pending,
		},
		{
			name: "completed cannot end again",
			setup: func(t *testing.T, q *Queue, c *fakeClock) string {
				id := submitAndClaim(t, q, c)
				_, err := q.Finish(ctx, id, true, "first")
				require.NoError(t, err)
				return id
			},
			ok:         false,
			wantErr:    task.ErrEnded,
			wantStatus: task.Completed,
			wantResult: "first",
		},
		{
			name: "failed cannot end again",
			setup: func(t *testing.T, q *Queue, c *fakeClock) string {
				id := submitAndClaim(t, q, c)
				_, err := q.Finish(ctx, id, false, "first")
				require.NoError(t, err)
				return id
			},
			ok:         true,
			wantErr:    task.ErrEnded,
			wantStatus: task.Failed,
			wantResult: "first",
		},
		{
			name: "late result after the timeout",
			setup: func(t *testing.T, q *Queue, c *fakeClock) string {
				id := submitAndClaim(t, q, c)
				c.Advance(2 * time.Hour)
				return id
			},
			ok:         true,
			wantErr:    task.ErrEnded,
			wantStatus: task.Failed,
			wantResult: "no result after 2h0m0s",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			eachBackend(t, Options{}, func(t *testing.T, q *Queue, clock *fakeClock) {
				id := tt.setup(t, q, clock)
				got, err := q.Finish(ctx, id, tt.ok, "result")
				if tt.wantErr != nil {
					require.ErrorIs(t, err, tt.wantErr)
					assert.Contains(t, err.Error(), id)
					assert.Equal(t, task.Task{}, got)
				} else {
					require.NoError(t, err)
				}
				stored, err := q.Get(ctx, id)
				require.NoError(t, err)
				assert.Equal(t, tt.wantStatus, stored.Status)
				assert.Equal(t, tt.wantResult, stored.Result)
			})
		})
	}
}

func submitAndClaim(t *testing.T, q *Queue, _ *fakeClock) string {
	t.Helper()
	ctx := context.Background()
	tk, err := q.Submit(ctx, "do it", "")
	require.NoError(t, err)
	got, err := q.Next(ctx, "cedar")
	require.NoError(t, err)
	require.NotNil(t, got)
	require.Equal(t, tk.ID, got.ID)
	return tk.ID
}

func TestNotFound(t *testing.T) {
	ctx := context.Background()
	eachBackend(t, Options{}, func(t *testing.T, q *Queue, clock *fakeClock) {
		_, err := q.Finish(ctx, "task-999999", true, "")
		require.ErrorIs(t, err, task.ErrNotFound)
		_, err = q.Get(ctx, "task-999999")
		require.ErrorIs(t, err, task.ErrNotFound)
		assert.Contains(t, err.Error(), "task-999999")
	})
}

func TestClaiming(t *testing.T) {
	ctx := context.Background()
	eachBackend(t, Options{}, func(t *testing.T, q *Queue, clock *fakeClock) {
		// Submitted in this order; each a minute apart.
		for _, s := range []struct{ desc, agent string }{
			{"for vault", "vault"},
			{"for anyone 1", ""},
			{"for cedar", "cedar"},
			{"for anyone 2", ""},
		} {
			_, err := q.Submit(ctx, s.desc, s.agent)
			require.NoError(t, err)
			clock.Advance(time.Minute)
		}
		claim := func(agent string) string {
			t.Helper()
			got, err := q.Next(ctx, agent)
			require.NoError(t, err)
			if got == nil {
				return ""
			}
			assert.Equal(t, agent, got.AssignedTo)
			assert.Equal(t, task.Assigned, got.Status)
			_, err = q.Finish(ctx, got.ID, true, "ok")
			require.NoError(t, err)
			return got.Description
		}
		// cedar skips vault's task and takes the oldest it may take.
		assert.Equal(t, "for anyone 1", claim("cedar"))
		assert.Equal(t, "for cedar", claim("cedar"))
		assert.Equal(t, "for anyone 2", claim("cedar"))
		assert.Equal(t, "", claim("cedar"))
		assert.Equal(t, "", claim("cipher"))
		assert.Equal(t, "for vault", claim("vault"))
	})
}

func TestNextResumesAssignedTask(t *testing.T) {
	ctx := context.Background()
	clock := newClock()
	dir := t.TempDir()
	q, err := Open(dir, Options{})
	require.NoError(t, err)
	first, err := q.Submit(ctx, "first", "")
	require.NoError(t, err)
	_, err = q.Submit(ctx, "second", "")
	require.NoError(t, err)
	got, err := q.Next(ctx, "cedar")
	require.NoError(t, err)
	require.Equal(t, first.ID, got.ID)

	// The agent restarts: a new process opens the queue and asks again.
	clock.Advance(time.Hour)
	q2, err := Open(dir, Options{})
	require.NoError(t, err)
	again, err := q2.Next(ctx, "cedar")
	require.NoError(t, err)
	require.NotNil(t, again)
	assert.Equal(t, *got, *again, "resumed task keeps its assignment time")

	// Another agent gets the other task.
	other, err := q2.Next(ctx, "vault")
	require.NoError(t, err)
	require.NotNil(t, other)
	assert.Equal(t, "second", other.Description)
}

func TestExpireAfterExactlyTimeout(t *testing.T) {
	ctx := context.Background()
	eachBackend(t, Options{}, func(t *testing.T, q *Queue, clock *fakeClock) {
		tk, err := q.Submit(ctx, "slow work", "")
		require.NoError(t, err)
		clock.Advance(10 * time.Minute) // waited in the queue: does not count
		claimed, err := q.Next(ctx, "cedar")
		require.NoError(t, err)
		require.NotNil(t, claimed)
		assigned := clock.Now()

		clock.Advance(2*time.Hour - time.Nanosecond)
		expired, err := q.Expire(ctx)
		require.NoError(t, err)
		assert.Empty(t, expired)
		still, err := q.Get(ctx, tk.ID)
		require.NoError(t, err)
		assert.Equal(t, task.Assigned, still.Status)

		clock.Advance(time.Nanosecond) // exactly 2h after assignment
		expired, err = q.Expire(ctx)
		require.NoError(t, err)
		require.Len(t, expired, 1)
		want := task.Task{
			ID: tk.ID, Description: "slow work", Status: task.Failed, AssignedTo: "cedar",
			Submitted: t0, Assigned: assigned, Ended: assigned.Add(2 * time.Hour),
			Result: "no result after 2h0m0s",
		}
		assert.Equal(t, want, expired[0])
		stored, err := q.Get(ctx, tk.ID)
		require.NoError(t, err)
		assert.Equal(t, want, stored)

		expired, err = q.Expire(ctx)
		require.NoError(t, err)
		assert.Empty(t, expired, "a task expires once")
	})
}

func TestNextExpiresBeforeResuming(t *testing.T) {
	ctx := context.Background()
	eachBackend(t, Options{Timeout: time.Minute}, func(t *testing.T, q *Queue, clock *fakeClock) {
		old := submitAndClaim(t, q, clock)
		next, err := q.Submit(ctx, "next one", "")
		require.NoError(t, err)
		clock.Advance(time.Minute)
		got, err := q.Next(ctx, "cedar")
		require.NoError(t, err)
		require.NotNil(t, got)
		assert.Equal(t, next.ID, got.ID, "the overdue task is failed, not resumed")
		stored, err := q.Get(ctx, old)
		require.NoError(t, err)
		assert.Equal(t, task.Failed, stored.Status)
		assert.Equal(t, "no result after 1m0s", stored.Result)
	})
}

func TestSubmitValidation(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name, desc, agent string
		wantErr           error
		wantDesc          string
	}{
		{name: "empty", desc: "", wantErr: task.ErrInvalid},
		{name: "blank", desc: " \n\t ", wantErr: task.ErrInvalid},
		{name: "bad agent", desc: "x", agent: "../cedar", wantErr: identity.ErrInvalidID},
		{name: "upper-case agent", desc: "x", agent: "Cedar", wantErr: task.ErrInvalid},
		{name: "kept", desc: "line one\nline two", agent: "cedar", wantDesc: "line one\nline two"},
		{name: "cut by code point", desc: strings.Repeat("日", 21), wantDesc: strings.Repeat("日", 20)},
		{name: "trimmed then cut", desc: "  " + strings.Repeat("é", 25) + "  ", wantDesc: strings.Repeat("é", 20)},
	}
	eachBackend(t, Options{MaxDescription: 20}, func(t *testing.T, q *Queue, clock *fakeClock) {
		for _, tt := range tests {
			got, err := q.Submit(ctx, tt.desc, tt.agent)
			if tt.wantErr != nil {
				require.ErrorIs(t, err, tt.wantErr, tt.name)
				require.ErrorIs(t, err, task.ErrInvalid, tt.name)
				continue
			}
			require.NoError(t, err, tt.name)
			assert.Equal(t, tt.wantDesc, got.Description, tt.name)
			assert.Equal(t, tt.agent, got.Agent, tt.name)
		}
		all, err := q.List(ctx)
		require.NoError(t, err)
		assert.Len(t, all, 3, "refused submissions leave nothing behind")

		_, err = q.Next(ctx, "")
		require.ErrorIs(t, err, task.ErrInvalid)
	})
}

func TestResultCut(t *testing.T) {
	ctx := context.Background()
	eachBackend(t, Options{MaxResult: 3}, func(t *testing.T, q *Queue, clock *fakeClock) {
		id := submitAndClaim(t, q, clock)
		got, err := q.Finish(ctx, id, true, "😀😀😀😀")
		require.NoError(t, err)
		assert.Equal(t, "😀😀😀", got.Result)
	})
}

func TestMaxTasksDropsOldestEnded(t *testing.T) {
	ctx := context.Background()
	eachBackend(t, Options{MaxTasks: 2}, func(t *testing.T, q *Queue, clock *fakeClock) {
		agents := []string{"a0", "a1", "a2", "a3", "a4", "a5"}
		for i := range agents {
			_, err := q.Submit(ctx, fmt.Sprintf("task %d", i), agents[i])
			require.NoError(t, err)
		}
		for _, i := range []int{3, 1, 4, 0} {
			got, err := q.Next(ctx, agents[i])
			require.NoError(t, err)
			clock.Advance(time.Second)
			_, err = q.Finish(ctx, got.ID, i%2 == 0, "r")
			require.NoError(t, err)
		}
		_, err := q.Next(ctx, agents[2])
		require.NoError(t, err)
		all, err := q.List(ctx)
		require.NoError(t, err)
		var got []string
		for _, tk := range all {
			got = append(got, fmt.Sprintf("%s:%s", tk.Description, tk.Status))
		}
		// 3 and 1 ended first and were dropped; 4 and 0 are the 2 newest
		// ended; 2 (assigned) and 5 (pending) are never dropped. Order is
		// submission order.
		assert.Equal(t, []string{"task 0:completed", "task 2:assigned", "task 4:completed", "task 5:pending"}, got)
	})
}

func TestIDsUniqueAfterDrops(t *testing.T) {
	ctx := context.Background()
	eachBackend(t, Options{MaxTasks: 1}, func(t *testing.T, q *Queue, clock *fakeClock) {
		seen := map[string]bool{}
		for range 5 {
			id := submitAndClaim(t, q, clock)
			assert.False(t, seen[id], "id %s reused", id)
			seen[id] = true
			_, err := q.Finish(ctx, id, true, "")
			require.NoError(t, err)
		}
		all, err := q.List(ctx)
		require.NoError(t, err)
		require.Len(t, all, 1)
		assert.Equal(t, "task-000005", all[0].ID)
	})
}

func TestCanceledContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	eachBackend(t, Options{}, func(t *testing.T, q *Queue, clock *fakeClock) {
		_, err := q.Submit(ctx, "x", "")
		require.ErrorIs(t, err, context.Canceled)
		_, err = q.Next(ctx, "cedar")
		require.ErrorIs(t, err, context.Canceled)
		_, err = q.Finish(ctx, "task-000001", true, "")
		require.ErrorIs(t, err, context.Canceled)
		_, err = q.Expire(ctx)
		require.ErrorIs(t, err, context.Canceled)
		_, err = q.Get(ctx, "task-000001")
		require.ErrorIs(t, err, context.Canceled)
		_, err = q.List(ctx)
		require.ErrorIs(t, err, context.Canceled)
	})
}

func TestReturnedTasksAreCopies(t *testing.T) {
	ctx := context.Background()
	eachBackend(t, Options{}, func(t *testing.T, q *Queue, clock *fakeClock) {
		_, err := q.Submit(ctx, "original", "")
		require.NoError(t, err)
		all, err := q.List(ctx)
		require.NoError(t, err)
		all[0].Description = "changed"
		got, err := q.Next(ctx, "cedar")
		require.NoError(t, err)
		got.Description = "changed too"
		stored, err := q.Get(ctx, got.ID)
		require.NoError(t, err)
		assert.Equal(t, "original", stored.Description)
	})
}

// TestConcurrentMemory hammers one memory queue from many goroutines (run
// with -race): every task is submitted once and claimed at most once.
func TestConcurrentMemory(t *testing.T) {
	q := NewMemory(Options{})
	const goroutines, perG = 16, 50
	submitted, claimed := hammer(t, []*Queue{q}, goroutines, perG)
	checkNoneLost(t, q, submitted, claimed, goroutines*perG)
}

// hammer runs goroutines per queue, each submitting perG tasks and claiming
// and finishing what it can. It returns the ids submitted and claimed.
func hammer(t *testing.T, queues []*Queue, goroutines, perG int) (submitted, claimed map[string]int) {
	t.Helper()
	ctx := context.Background()
	var (
		mu sync.Mutex
		wg sync.WaitGroup
	)
	submitted, claimed = map[string]int{}, map[string]int{}
	for qi, q := range queues {
		for g := range goroutines {
			wg.Add(1)
			go func() {
				defer wg.Done()
				agent := fmt.Sprintf("agent-%d-%d", qi, g)
				for i := range perG {
					tk, err := q.Submit(ctx, fmt.Sprintf("q%d g%d n%d", qi, g, i), "")
					if !assert.NoError(t, err, "Submit") {
						return
					}
					mu.Lock()
					submitted[tk.ID]++
					mu.Unlock()
					if i%2 == 1 {
						continue
					}
					got, err := q.Next(ctx, agent)
					if !assert.NoError(t, err, "Next") {
						return
					}
					if got == nil {
						continue
					}
					mu.Lock()
					claimed[got.ID]++
					mu.Unlock()
					if _, err := q.Finish(ctx, got.ID, true, agent); !assert.NoError(t, err, "Finish") {
						return
					}
				}
			}()
		}
	}
	wg.Wait()
	return submitted, claimed
}

func checkNoneLost(t *testing.T, q *Queue, submitted, claimed map[string]int, want int) {
	t.Helper()
	require.Len(t, submitted, want, "Submit returned duplicate ids")
	for id, n := range claimed {
		assert.Equal(t, 1, n, "task %s claimed %d times", id, n)
	}
	all, err := q.List(context.Background())
	require.NoError(t, err)
	require.Len(t, all, want, "tasks lost or duplicated")
	descs := map[string]bool{}
	completed := 0
	for _, tk := range all {
		assert.Equal(t, 1, submitted[tk.ID], "unknown task %s", tk.ID)
		assert.False(t, descs[tk.Description], "duplicate description %q", tk.Description)
		descs[tk.Description] = true
		switch tk.Status {
		case task.Completed:
			completed++
			assert.Equal(t, 1, claimed[tk.ID])
			assert.Equal(t, tk.AssignedTo, tk.Result, "finished by the agent that claimed it")
		case task.Pending:
			assert.Zero(t, claimed[tk.ID])
		default:
			assert.Fail(t, "unexpected status", "task %s is %s", tk.ID, tk.Status)
		}
	}
	assert.Equal(t, len(claimed), completed)
	assert.Positive(t, completed)
}

func BenchmarkCycleMemory(b *testing.B) {
	ctx := context.Background()
	q := NewMemory(Options{MaxTasks: 100})
	b.ReportAllocs()
	for b.Loop() {
		if _, err := q.Submit(ctx, "benchmark task", ""); err != nil {
			b.Fatal(err)
		}
		got, err := q.Next(ctx, "cedar")
		if err != nil {
			b.Fatal(err)
		}
		if _, err := q.Finish(ctx, got.ID, true, "ok"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCycleFile measures one task's durable cycle (Submit, Next,
// Finish: three locked read-modify-write rounds, each with fsync, rename and
// fsync of the directory) with 100 ended tasks in the file.
func BenchmarkCycleFile(b *testing.B) {
	ctx := context.Background()
	q, err := Open(b.TempDir(), Options{MaxTasks: 100})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		tk, err := q.Submit(ctx, "benchmark task", "")
		if err != nil {
			b.Fatal(err)
		}
		if _, err := q.Next(ctx, "cedar"); err != nil {
			b.Fatal(err)
		}
		if _, err := q.Finish(ctx, tk.ID, true, "ok"); err != nil {
			b.Fatal(err)
		}
	}
}

func TestPeekDoesNotClaim(t *testing.T) {
	ctx := context.Background()
	q := NewMemory(Options{})
	got, err := q.Peek(ctx, "scout")
	require.NoError(t, err, "Peek on empty queue")
	require.Nil(t, got, "Peek on empty queue")
	mine, _ := q.Submit(ctx, "for analyst", "analyst")
	anyone, _ := q.Submit(ctx, "for anyone", "")
	got, err = q.Peek(ctx, "scout")
	require.NoError(t, err, "Peek(scout)")
	require.NotNil(t, got, "Peek(scout): want pending %s", anyone.ID)
	require.Equal(t, anyone.ID, got.ID, "Peek(scout)")
	require.Equal(t, task.Pending, got.Status, "Peek(scout)")
	got, _ = q.Peek(ctx, "analyst")
	require.NotNil(t, got, "Peek(analyst): want %s", mine.ID)
	require.Equal(t, mine.ID, got.ID, "Peek(analyst)")
	// Peek claimed nothing: Next still hands out the same task.
	next, err := q.Next(ctx, "analyst")
	require.NoError(t, err, "Next(analyst)")
	require.NotNil(t, next, "Next(analyst)")
	require.Equal(t, mine.ID, next.ID, "Next(analyst)")
	got, _ = q.Peek(ctx, "analyst")
	require.NotNil(t, got, "Peek after Next: want the assigned task")
	require.Equal(t, mine.ID, got.ID, "Peek after Next: want the assigned task")
	require.Equal(t, task.Assigned, got.Status, "Peek after Next: want the assigned task")
	_, err = q.Peek(ctx, "../x")
	require.ErrorIs(t, err, task.ErrInvalid, "Peek(bad id)")
}
