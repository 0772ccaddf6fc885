package taskqueue_test

import (
	"sync"
	"testing"
	"time"

	"github.com/existence-loop/sdk/store/taskqueue"
	"github.com/existence-loop/sdk/task"
	"github.com/existence-loop/sdk/task/tasktest"
)

// clock is a fake clock safe for concurrent use.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// harness gives tasktest queues on fake clocks: open makes one from
// Options (a file queue or a memory one).
func harness(open func(t *testing.T, o taskqueue.Options) *taskqueue.Queue) tasktest.Harness {
	clocks := map[task.Queue]*clock{}
	var mu sync.Mutex
	return tasktest.Harness{
		New: func(t *testing.T, l task.Limits) task.Queue {
			c := &clock{now: time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)}
			q := open(t, taskqueue.Options{Now: c.Now, Timeout: l.Timeout, MaxDescription: l.MaxDescription, MaxResult: l.MaxResult, MaxTasks: l.MaxTasks})
			mu.Lock()
			clocks[q] = c
			mu.Unlock()
			return q
		},
		Age: func(t *testing.T, q task.Queue, d time.Duration) {
			mu.Lock()
			defer mu.Unlock()
			clocks[q].Advance(d)
		},
	}
}

// TestConformance: the file queue and the memory queue keep the task.Queue
// contract.
func TestConformance(t *testing.T) {
	t.Run("file", func(t *testing.T) {
		tasktest.Run(t, harness(func(t *testing.T, o taskqueue.Options) *taskqueue.Queue {
			q, err := taskqueue.Open(t.TempDir(), o)
			if err != nil {
				t.Fatal(err)
			}
			return q
		}))
	})
	t.Run("memory", func(t *testing.T) {
		tasktest.Run(t, harness(func(t *testing.T, o taskqueue.Options) *taskqueue.Queue { return taskqueue.NewMemory(o) }))
	})
}
