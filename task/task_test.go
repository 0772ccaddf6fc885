package task_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/existence-loop/sdk/task"
)

func TestCheckEnd(t *testing.T) {
	for _, tt := range []struct {
		status, from task.Status
		want         error
	}{
		{task.Assigned, task.Assigned, nil},
		{task.Pending, task.Pending, nil},
		{task.Pending, task.Assigned, task.ErrNotAssigned},
		{task.Assigned, task.Pending, task.ErrNotPending},
		{task.Completed, task.Assigned, task.ErrEnded},
		{task.Failed, task.Pending, task.ErrEnded},
	} {
		err := task.CheckEnd(task.Task{ID: "t1", Status: tt.status, AssignedTo: "scout"}, tt.from)
		if tt.want == nil {
			if err != nil {
				t.Errorf("%s from %s: %v", tt.status, tt.from, err)
			}
			continue
		}
		if !errors.Is(err, tt.want) || !strings.Contains(err.Error(), "t1") {
			t.Errorf("%s from %s: %v, want %v naming t1", tt.status, tt.from, err, tt.want)
		}
	}
}
