package task

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Status is where a [Task] is in its lifecycle: [Pending] → [Assigned] →
// [Completed] or [Failed]. Completed and Failed are final ("ended").
type Status string

// Task statuses.
const (
	// Pending: submitted, not yet claimed by an agent.
	Pending Status = "pending"
	// Assigned: claimed by an agent ([Source.Next]), waiting for its result.
	Assigned Status = "assigned"
	// Completed: the agent finished it successfully ([Source.Finish] with ok).
	Completed Status = "completed"
	// Failed: the agent failed it ([Source.Finish] without ok), or it had no
	// result within the backend's timeout of being assigned.
	Failed Status = "failed"
)

// Ended reports whether s is a final status ([Completed] or [Failed]).
func (s Status) Ended() bool { return s == Completed || s == Failed }

// Valid reports whether s is one of the four statuses.
func (s Status) Valid() bool {
	return s == Pending || s == Assigned || s == Completed || s == Failed
}

// Task is one externally assigned task (spec §2 row 1). Values returned by
// a [Source] are copies the caller owns.
type Task struct {
	// ID is unique within the queue: "task-" and a zero-padded sequence
	// number, e.g. "task-000042". IDs are never reused by a queue.
	ID string `json:"id"`
	// Description is what to do: non-blank, at most the backend's limit in
	// characters (Unicode code points; 2000 by default).
	Description string `json:"description"`
	// Agent is the id of the agent the task is for; "" means any agent.
	Agent string `json:"agent,omitempty"`
	// Status is where the task is in its lifecycle.
	Status Status `json:"status"`
	// AssignedTo is the id of the agent that claimed the task; "" while
	// Pending.
	AssignedTo string `json:"assigned_to,omitempty"`
	// Submitted is when the task was submitted.
	Submitted time.Time `json:"submitted"`
	// Assigned is when an agent claimed the task; zero while Pending.
	Assigned time.Time `json:"assigned,omitzero"`
	// Ended is when the task was finished, or, for a task that expired, the
	// instant its deadline passed (Assigned + timeout); zero until then.
	Ended time.Time `json:"ended,omitzero"`
	// Result is the agent's result (or failure reason), at most the
	// backend's limit in characters (2000 by default); "" until the task
	// ends.
	Result string `json:"result,omitempty"`
}

// Source is the queue of assigned tasks an agent draws from (spec §2 row
// 1). Implementations are safe for concurrent use.
type Source interface {
	// Next claims the oldest pending task assigned to agentID, or to any
	// agent, marking it claimed; it returns nil, nil when there is none. An
	// agent that already holds an Assigned task gets that one back, so it
	// resumes its task after a restart.
	Next(ctx context.Context, agentID string) (*Task, error)
	// Peek returns the task Next would claim, without claiming it (dry
	// runs); nil, nil when there is none.
	Peek(ctx context.Context, agentID string) (*Task, error)
	// Finish records a claimed task's result: completed when ok, failed
	// otherwise. Errors: [ErrNotFound], [ErrEnded], [ErrNotAssigned], or the
	// backend's own error.
	Finish(ctx context.Context, id string, ok bool, result string) (Task, error)
}

// Errors every backend returns. Match them with errors.Is.
var (
	// ErrInvalid: a blank description, or an invalid agent id.
	ErrInvalid = errors.New("task: invalid argument")
	// ErrNotFound: no task has the given id (it never existed, or it ended
	// long ago and was dropped).
	ErrNotFound = errors.New("task: no such task")
	// ErrEnded: the task already ended (completed, failed or expired); its
	// state is unchanged.
	ErrEnded = errors.New("task: already ended")
	// ErrNotAssigned: Finish on a task that no agent has claimed.
	ErrNotAssigned = errors.New("task: not assigned")
	// ErrNotPending: [Queue.Cancel] on a task an agent has claimed (end it
	// with [Source.Finish]).
	ErrNotPending = errors.New("task: not pending")
	// ErrFull: the queue would grow past its size limit with pending and
	// assigned tasks alone; the submission is refused.
	ErrFull = errors.New("task: queue full")
)

// CheckEnd is the one rule of ending a task, which every backend applies
// under its lock or transaction: [Source.Finish] ends a task an agent has
// claimed (from [Assigned]), [Queue.Cancel] one no agent has (from
// [Pending]). It returns nil when t may end, else an error naming t.ID:
// [ErrEnded] for a task that already ended, [ErrNotAssigned] for Finish on
// a pending task, [ErrNotPending] for Cancel on a claimed task.
func CheckEnd(t Task, from Status) error {
	switch {
	case t.Status.Ended():
		return fmt.Errorf("%w: %s is %s", ErrEnded, t.ID, t.Status)
	case t.Status == from:
		return nil
	case from == Assigned:
		return fmt.Errorf("%w: %s is pending", ErrNotAssigned, t.ID)
	default:
		return fmt.Errorf("%w: %s is assigned to %s", ErrNotPending, t.ID, t.AssignedTo)
	}
}

// Limits are the caps a backend applies to tasks. The zero value of a field
// means its default.
type Limits struct {
	// Timeout is how long an assigned task may go without a result before
	// it is failed with "no result after {Timeout}"; default 2h.
	Timeout time.Duration
	// MaxDescription is the longest description in characters (Unicode
	// code points); longer ones are cut. Default 2000.
	MaxDescription int
	// MaxResult is the longest result in characters; longer ones are cut.
	// Default 2000.
	MaxResult int
	// MaxTasks is how many ended tasks are kept; beyond it the oldest ended
	// tasks are dropped first. Pending and assigned tasks are never
	// dropped. Default 1000.
	MaxTasks int
}

// Defaults of [Limits].
const (
	DefaultTimeout        = 2 * time.Hour
	DefaultMaxDescription = 2000
	DefaultMaxResult      = 2000
	DefaultMaxTasks       = 1000
)

// WithDefaults returns l with every zero or negative field set to its
// default.
func (l Limits) WithDefaults() Limits {
	if l.Timeout <= 0 {
		l.Timeout = DefaultTimeout
	}
	if l.MaxDescription <= 0 {
		l.MaxDescription = DefaultMaxDescription
	}
	if l.MaxResult <= 0 {
		l.MaxResult = DefaultMaxResult
	}
	if l.MaxTasks <= 0 {
		l.MaxTasks = DefaultMaxTasks
	}
	return l
}
