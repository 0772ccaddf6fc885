package pgstore_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/internal/pgtest"
	"github.com/existence-loop/sdk/store/pgstore"
	"github.com/existence-loop/sdk/task"
)

func TestQueueLifecycle(t *testing.T) {
	ctx := context.Background()
	s := open(t, pgtest.New(t), "a", time.Hour)
	q := s.Tasks()
	_, err := q.Submit(ctx, "  ", "")
	require.ErrorIs(t, err, task.ErrInvalid, "blank Submit")
	t1, err := q.Submit(ctx, " map the workspace ", "")
	require.NoError(t, err)
	t2, err := q.Submit(ctx, "for cipher only", "cipher")
	require.NoError(t, err)
	require.Equal(t, "task-000001", t1.ID, "submitted %+v", t1)
	require.Equal(t, task.Pending, t1.Status, "submitted %+v", t1)
	require.Equal(t, "map the workspace", t1.Description, "submitted %+v", t1)
	p, err := q.Peek(ctx, "scout")
	require.NoError(t, err, "Peek")
	require.NotNil(t, p, "Peek")
	require.Equal(t, t1.ID, p.ID, "Peek")
	got, err := q.Next(ctx, "scout")
	require.NoError(t, err, "Next")
	require.NotNil(t, got, "Next")
	require.Equal(t, t1.ID, got.ID, "Next = %+v", got)
	require.Equal(t, task.Assigned, got.Status, "Next = %+v", got)
	require.Equal(t, "scout", got.AssignedTo, "Next = %+v", got)
	again, err := q.Next(ctx, "scout")
	require.NoError(t, err, "second Next")
	require.NotNil(t, again, "second Next: want the assigned task back (resume)")
	require.Equal(t, t1.ID, again.ID, "second Next: want the assigned task back (resume)")
	none, err := q.Next(ctx, "builder")
	require.NoError(t, err, "Next for builder")
	require.Nil(t, none, "Next for builder: want nothing (task-2 is for cipher)")
	_, err = q.Finish(ctx, t2.ID, true, "x")
	require.ErrorIs(t, err, task.ErrNotAssigned, "Finish of a pending task")
	done, err := q.Finish(ctx, t1.ID, true, "a map")
	require.NoError(t, err, "Finish")
	require.Equal(t, task.Completed, done.Status, "Finish = %+v", done)
	require.Equal(t, "a map", done.Result, "Finish = %+v", done)
	require.False(t, done.Ended.IsZero(), "Finish = %+v: no end time", done)
	_, err = q.Finish(ctx, t1.ID, false, "again")
	require.ErrorIs(t, err, task.ErrEnded, "second Finish")
	_, err = q.Get(ctx, "task-999")
	require.ErrorIs(t, err, task.ErrNotFound, "Get of nothing")
	_, err = q.Finish(ctx, "nonsense", true, "")
	require.ErrorIs(t, err, task.ErrNotFound, "Finish of a bad id")
	all, err := q.List(ctx)
	require.NoError(t, err, "List")
	require.Len(t, all, 2, "List")
	require.Equal(t, "cipher", all[1].Agent, "List = %+v", all)
}

func TestQueueExpiresOverdueTasks(t *testing.T) {
	ctx := context.Background()
	url := pgtest.New(t)
	s, err := pgstore.Open(ctx, url, pgstore.Options{TaskTimeout: time.Hour})
	require.NoError(t, err)
	defer s.Close()
	q := s.Tasks()
	tk, _ := q.Submit(ctx, "slow", "")
	_, err = q.Next(ctx, "scout")
	require.NoError(t, err)
	_, err = s.Pool().Exec(ctx, `UPDATE existence_tasks SET assigned = assigned - interval '2 hours'`)
	require.NoError(t, err)
	exp, err := q.Expire(ctx)
	require.NoError(t, err, "Expire")
	require.Len(t, exp, 1, "Expire")
	require.Equal(t, tk.ID, exp[0].ID, "Expire = %+v", exp)
	require.Equal(t, task.Failed, exp[0].Status, "Expire = %+v", exp)
	require.Equal(t, "no result after 1h0m0s", exp[0].Result, "Expire = %+v", exp)
	_, err = q.Finish(ctx, tk.ID, true, "late")
	require.ErrorIs(t, err, task.ErrEnded, "late Finish")
}

// TestQueueConcurrentClaimsSkipLocked: two processes' stores claim 60
// tasks for 6 agents at once; each task is claimed exactly once.
func TestQueueConcurrentClaimsSkipLocked(t *testing.T) {
	ctx := context.Background()
	url := pgtest.New(t)
	stores := []*pgstore.Store{open(t, url, "a", time.Hour), open(t, url, "b", time.Hour)}
	for i := range 60 {
		_, err := stores[0].Tasks().Submit(ctx, fmt.Sprint("task ", i), "")
		require.NoError(t, err)
	}
	var mu sync.Mutex
	seen := map[string]string{}
	var wg sync.WaitGroup
	errs := make(chan error, 6)
	for i := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			agent := fmt.Sprint("agent-", i)
			q := stores[i%2].Tasks()
			for {
				tk, err := q.Next(ctx, agent)
				if err != nil {
					errs <- err
					return
				}
				if tk == nil {
					return
				}
				mu.Lock()
				if prev, ok := seen[tk.ID]; ok {
					errs <- fmt.Errorf("%s claimed by %s and %s", tk.ID, prev, agent)
				}
				seen[tk.ID] = agent
				mu.Unlock()
				if _, err := q.Finish(ctx, tk.ID, true, "ok"); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		assert.NoError(t, err)
	}
	require.Len(t, seen, 60, "tasks done")
}
