package pgstore_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/existence-loop/sdk/identity/pgstore"
	"github.com/existence-loop/sdk/internal/pgtest"
	"github.com/existence-loop/sdk/task"
)

func TestQueueLifecycle(t *testing.T) {
	ctx := context.Background()
	s := open(t, pgtest.New(t), "a", time.Hour)
	q := s.Tasks()
	if _, err := q.Submit(ctx, "  ", ""); !errors.Is(err, task.ErrInvalid) {
		t.Fatalf("blank Submit = %v", err)
	}
	t1, err := q.Submit(ctx, " map the workspace ", "")
	if err != nil {
		t.Fatal(err)
	}
	t2, err := q.Submit(ctx, "for cipher only", "cipher")
	if err != nil {
		t.Fatal(err)
	}
	if t1.ID != "task-000001" || t1.Status != task.Pending || t1.Description != "map the workspace" {
		t.Fatalf("submitted %+v", t1)
	}
	if p, err := q.Peek(ctx, "scout"); err != nil || p == nil || p.ID != t1.ID {
		t.Fatalf("Peek = %+v, %v", p, err)
	}
	got, err := q.Next(ctx, "scout")
	if err != nil || got == nil || got.ID != t1.ID || got.Status != task.Assigned || got.AssignedTo != "scout" {
		t.Fatalf("Next = %+v, %v", got, err)
	}
	again, err := q.Next(ctx, "scout")
	if err != nil || again == nil || again.ID != t1.ID {
		t.Fatalf("second Next = %+v, %v; want the assigned task back (resume)", again, err)
	}
	if none, err := q.Next(ctx, "builder"); err != nil || none != nil {
		t.Fatalf("Next for builder = %+v, %v; want nothing (task-2 is for cipher)", none, err)
	}
	if _, err := q.Finish(ctx, t2.ID, true, "x"); !errors.Is(err, task.ErrNotAssigned) {
		t.Fatalf("Finish of a pending task = %v", err)
	}
	done, err := q.Finish(ctx, t1.ID, true, "a map")
	if err != nil || done.Status != task.Completed || done.Result != "a map" || done.Ended.IsZero() {
		t.Fatalf("Finish = %+v, %v", done, err)
	}
	if _, err := q.Finish(ctx, t1.ID, false, "again"); !errors.Is(err, task.ErrEnded) {
		t.Fatalf("second Finish = %v", err)
	}
	if _, err := q.Get(ctx, "task-999"); !errors.Is(err, task.ErrNotFound) {
		t.Fatalf("Get of nothing = %v", err)
	}
	if _, err := q.Finish(ctx, "nonsense", true, ""); !errors.Is(err, task.ErrNotFound) {
		t.Fatalf("Finish of a bad id = %v", err)
	}
	all, err := q.List(ctx)
	if err != nil || len(all) != 2 || all[1].Agent != "cipher" {
		t.Fatalf("List = %+v, %v", all, err)
	}
}

func TestQueueExpiresOverdueTasks(t *testing.T) {
	ctx := context.Background()
	url := pgtest.New(t)
	s, err := pgstore.Open(ctx, url, pgstore.Options{TaskTimeout: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	q := s.Tasks()
	tk, _ := q.Submit(ctx, "slow", "")
	if _, err := q.Next(ctx, "scout"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Pool().Exec(ctx, `UPDATE existence_tasks SET assigned = assigned - interval '2 hours'`); err != nil {
		t.Fatal(err)
	}
	exp, err := q.Expire(ctx)
	if err != nil || len(exp) != 1 || exp[0].ID != tk.ID || exp[0].Status != task.Failed || exp[0].Result != "no result after 1h0m0s" {
		t.Fatalf("Expire = %+v, %v", exp, err)
	}
	if _, err := q.Finish(ctx, tk.ID, true, "late"); !errors.Is(err, task.ErrEnded) {
		t.Fatalf("late Finish = %v, want ErrEnded", err)
	}
}

// TestQueueConcurrentClaimsSkipLocked: two processes' stores claim 60
// tasks for 6 agents at once; each task is claimed exactly once.
func TestQueueConcurrentClaimsSkipLocked(t *testing.T) {
	ctx := context.Background()
	url := pgtest.New(t)
	stores := []*pgstore.Store{open(t, url, "a", time.Hour), open(t, url, "b", time.Hour)}
	for i := range 60 {
		if _, err := stores[0].Tasks().Submit(ctx, fmt.Sprint("task ", i), ""); err != nil {
			t.Fatal(err)
		}
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
		t.Error(err)
	}
	if len(seen) != 60 {
		t.Fatalf("%d tasks done, want 60", len(seen))
	}
}
