package mcpserver

import (
	"context"
	"encoding/json"

	"github.com/existence-loop/sdk/task"
)

// AddTaskTool makes calls of the tool name create a task with create for
// clients that declare the Tasks extension; for the tests' fixture of the
// conformance tester's Tasks scenarios. A create error made with
// Refusal is a tool error.
func (s *Server) AddTaskTool(name string, create func(ctx context.Context, args json.RawMessage) (task.Task, error)) {
	s.taskTools[name] = create
}

// Refusal marks err as a tool's own answer (a tool error).
func Refusal(err error) error { return refusal{err} }
