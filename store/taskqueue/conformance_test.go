package taskqueue

import (
	"sync"
	"testing"
	"time"

	"github.com/existence-loop/sdk/task"
	"github.com/existence-loop/sdk/task/tasktest"
)

// harness gives tasktest queues on fake clocks: open makes one from
// Options (a file queue or a memory one); Age advances its clock.
func harness(open func(t *testing.T, o Options) *Queue) tasktest.Harness {
	var mu sync.Mutex
	clocks := map[task.Queue]*fakeClock{}
	return tasktest.Harness{
		New: func(t *testing.T, l task.Limits) task.Queue {
			c := newClock()
			q := open(t, Options{Now: c.Now, Timeout: l.Timeout, MaxDescription: l.MaxDescription, MaxResult: l.MaxResult, MaxTasks: l.MaxTasks})
			mu.Lock()
			defer mu.Unlock()
			clocks[q] = c
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
		tasktest.Run(t, harness(func(t *testing.T, o Options) *Queue {
			q, err := Open(t.TempDir(), o)
			if err != nil {
				t.Fatal(err)
			}
			return q
		}))
	})
	t.Run("memory", func(t *testing.T) {
		tasktest.Run(t, harness(func(t *testing.T, o Options) *Queue { return NewMemory(o) }))
	})
}
