package tasktest_test

import (
	"testing"

	"github.com/existence-loop/sdk/store/taskqueue"
	"github.com/existence-loop/sdk/task"
	"github.com/existence-loop/sdk/task/tasktest"
)

// A backend's test runs the suite with a constructor of new, empty
// queues. Without an Age hook the expiry subtests skip; give one (a fake
// clock the queue reads, or stored times moved back) to run them.
func ExampleRun() {
	_ = func(t *testing.T) { // func TestQueueConformance(t *testing.T)
		tasktest.Run(t, tasktest.Harness{
			New: func(t *testing.T, l task.Limits) task.Queue {
				return taskqueue.NewMemory(taskqueue.Options{Timeout: l.Timeout, MaxDescription: l.MaxDescription, MaxResult: l.MaxResult})
			},
		})
	}
}
