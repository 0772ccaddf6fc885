package sqlitestore_test

import (
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/existence-loop/sdk/store/sqlitestore"
	"github.com/existence-loop/sdk/task"
	"github.com/existence-loop/sdk/task/tasktest"
)

// TestQueueConformance: the SQLite task queue keeps the task.Queue
// contract; Age advances the store's clock.
func TestQueueConformance(t *testing.T) {
	var mu sync.Mutex
	offsets := map[task.Queue]*time.Duration{}
	tasktest.Run(t, tasktest.Harness{
		New: func(t *testing.T, l task.Limits) task.Queue {
			var offset time.Duration
			now := func() time.Time {
				mu.Lock()
				defer mu.Unlock()
				return t0.Add(offset)
			}
			s := open(t, filepath.Join(t.TempDir(), "state.db"), sqlitestore.Options{Now: now, TaskLimits: l})
			q := s.Tasks()
			mu.Lock()
			offsets[q] = &offset
			mu.Unlock()
			return q
		},
		Age: func(t *testing.T, q task.Queue, d time.Duration) {
			mu.Lock()
			defer mu.Unlock()
			*offsets[q] += d
		},
	})
}
