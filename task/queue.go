package task

import (
	"context"
	"fmt"
	"strings"

	"github.com/existence-loop/sdk/internal/agentid"
	"github.com/existence-loop/sdk/internal/runes"
)

// Queue is a [Source] that people and programs also submit tasks to and
// read: what the monitor's API, the MCP server and the command line use.
// store/taskqueue (a file or memory), store/sqlitestore and store/pgstore
// implement it, and task/tasktest.Run is its conformance suite.
// Implementations are safe for concurrent use.
type Queue interface {
	Source
	// Submit adds a task for agentID ("" = any agent) and returns it,
	// [Pending], after [CheckSubmit]: the description trimmed of
	// surrounding white space and cut to the backend's
	// [Limits].MaxDescription characters. Errors: [ErrInvalid] (from
	// CheckSubmit), [ErrFull], or the backend's own error.
	Submit(ctx context.Context, description, agentID string) (Task, error)
	// Expire fails every assigned task that has had no result for the
	// backend's [Limits].Timeout, with the result "no result after
	// {Timeout}", and returns them. Every other update expires overdue
	// tasks first as well, so a late [Source.Finish] gets [ErrEnded].
	Expire(ctx context.Context) ([]Task, error)
	// Get returns the task with the given id. Errors: [ErrNotFound], or
	// the backend's own error.
	Get(ctx context.Context, id string) (Task, error)
	// List returns every task the queue keeps, oldest submitted first.
	List(ctx context.Context) ([]Task, error)
	// Cancel ends the pending task id, which no agent has claimed, as
	// [Failed] with result (cut to the backend's [Limits].MaxResult
	// characters) and the current time as Ended, atomically with respect
	// to [Source.Next]: a canceled task never reaches an agent. It returns
	// the ended task. A claimed task is ended with [Source.Finish]
	// instead; [Cancel] chooses. Errors: [ErrNotFound]; [ErrEnded] (state
	// unchanged); [ErrNotPending] (an agent has claimed it); the backend's
	// own error.
	Cancel(ctx context.Context, id, result string) (Task, error)
}

// CheckSubmit is the one rule for a submitted task, which every [Queue]
// applies before storing anything: the description is trimmed of
// surrounding white space, must not be blank, and is cut to maxDescription
// characters (Unicode code points; zero or less means
// [DefaultMaxDescription]); agentID is "" (any agent) or a valid agent id
// (see [CheckAgent]). It returns the description to store. Errors match
// [ErrInvalid]; for a bad agent id they also match identity.ErrInvalidID.
func CheckSubmit(description, agentID string, maxDescription int) (string, error) {
	description = strings.TrimSpace(description)
	if description == "" {
		return "", fmt.Errorf("%w: blank task description", ErrInvalid)
	}
	if agentID != "" {
		if err := CheckAgent(agentID); err != nil {
			return "", err
		}
	}
	if maxDescription <= 0 {
		maxDescription = DefaultMaxDescription
	}
	return runes.Head(description, maxDescription), nil
}

// CheckAgent reports whether agentID can claim tasks ([Source.Next],
// [Source.Peek]): 1–64 characters of a-z, 0-9, "_" and "-", starting with
// a letter or digit (the rule of identity.ValidateID). The error matches
// both [ErrInvalid] and identity.ErrInvalidID.
func CheckAgent(agentID string) error {
	if err := agentid.Validate(agentID); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	return nil
}
