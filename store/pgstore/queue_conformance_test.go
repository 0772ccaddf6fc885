package pgstore_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/existence-loop/sdk/internal/pgtest"
	"github.com/existence-loop/sdk/store/pgstore"
	"github.com/existence-loop/sdk/task"
	"github.com/existence-loop/sdk/task/tasktest"
)

// TestQueueConformance: the PostgreSQL task queue keeps the task.Queue
// contract on a real server; Age moves the stored assigned times back,
// since the server's clock decides expiry.
func TestQueueConformance(t *testing.T) {
	var mu sync.Mutex
	stores := map[task.Queue]*pgstore.Store{}
	tasktest.Run(t, tasktest.Harness{
		New: func(t *testing.T, l task.Limits) task.Queue {
			s, err := pgstore.Open(context.Background(), pgtest.New(t), pgstore.Options{
				TaskTimeout: l.Timeout, MaxDescription: l.MaxDescription, MaxResult: l.MaxResult,
			})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(s.Close)
			q := s.Tasks()
			mu.Lock()
			stores[q] = s
			mu.Unlock()
			return q
		},
		Age: func(t *testing.T, q task.Queue, d time.Duration) {
			mu.Lock()
			s := stores[q]
			mu.Unlock()
			_, err := s.Pool().Exec(context.Background(),
				fmt.Sprintf(`UPDATE existence_tasks SET assigned = assigned - interval '%d microseconds' WHERE status = 'assigned'`, d.Microseconds()))
			if err != nil {
				t.Fatal(err)
			}
		},
	})
}
