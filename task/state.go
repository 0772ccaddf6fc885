package task

import (
	"context"
	"errors"
	"fmt"
)

// State is how the agent protocols show a [Task]: the one mapping from
// the queue's [Status] that A2A (a2aserver: TASK_STATE_SUBMITTED, …) and
// MCP's Tasks extension (mcpserver: "working", "completed", "cancelled")
// both name in their own words.
type State string

// States of [StateOf].
const (
	// StateSubmitted: [Pending], not yet claimed by an agent.
	StateSubmitted State = "submitted"
	// StateWorking: [Assigned], an agent pursues it.
	StateWorking State = "working"
	// StateCompleted: [Completed]; the result is the goal's summary.
	StateCompleted State = "completed"
	// StateFailed: [Failed] (by the agent, or expired); the result is the
	// reason.
	StateFailed State = "failed"
	// StateCanceled: [Failed] with the result [CanceledResult], ended by a
	// client through [Cancel].
	StateCanceled State = "canceled"
)

// Ended reports whether s is final (completed, failed or canceled).
func (s State) Ended() bool {
	return s == StateCompleted || s == StateFailed || s == StateCanceled
}

// CanceledResult is the result [Cancel] gives the task it ends: a [Failed]
// task with this result is shown as canceled ([StateCanceled]).
const CanceledResult = "canceled by a client"

// StateOf returns the state t is shown in; "" for a task whose Status is
// not valid.
func StateOf(t Task) State {
	switch t.Status {
	case Pending:
		return StateSubmitted
	case Assigned:
		return StateWorking
	case Completed:
		return StateCompleted
	case Failed:
		if t.Result == CanceledResult {
			return StateCanceled
		}
		return StateFailed
	}
	return ""
}

// Cancel ends the task id of q at a client's request (A2A CancelTask,
// MCP tasks/cancel), as [Failed] with [CanceledResult]: a pending task
// through [Queue.Cancel], so that it never reaches an agent; a claimed one
// through [Source.Finish] (the agent's goal runs on to its own end, whose
// result the queue then refuses). A task claimed or ended between the read
// and the change is read again. It returns the task as it is afterwards.
// Errors: [ErrNotFound]; [ErrEnded] (the task had ended; the returned task
// is its final state); the backend's own error.
func Cancel(ctx context.Context, q Queue, id string) (Task, error) {
	for range 3 {
		t, err := q.Get(ctx, id)
		if err != nil {
			return Task{}, err
		}
		switch t.Status {
		case Pending:
			t, err = q.Cancel(ctx, id, CanceledResult)
			if errors.Is(err, ErrNotPending) || errors.Is(err, ErrEnded) {
				continue // claimed or ended meanwhile
			}
			return t, err
		case Assigned:
			t, err = q.Finish(ctx, id, false, CanceledResult)
			if errors.Is(err, ErrEnded) {
				continue
			}
			return t, err
		default:
			return t, fmt.Errorf("task %s: %w", id, ErrEnded)
		}
	}
	return Task{}, fmt.Errorf("task %s changed state three times while being canceled; try again", id)
}
