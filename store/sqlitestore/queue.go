package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/existence-loop/sdk/internal/runes"
	"github.com/existence-loop/sdk/task"
)

// Queue is the task queue kept in a [Store]'s database (the tasks table):
// a [task.Queue], with the contract's semantics (task/tasktest checks
// them): tasks are "task-000001", "task-000002", ... and never reused;
// Next resumes a task already assigned to the agent, else claims the
// oldest pending task for it or for any agent; tasks assigned for Timeout
// without a result fail; the oldest ended tasks beyond MaxTasks are
// dropped. Every change is one durable transaction, so no task is lost
// when the process dies. Errors are the contract's ([task.ErrNotFound],
// [task.ErrInvalid], ...).
type Queue struct {
	s *Store
}

var _ task.Queue = (*Queue)(nil)

const taskCols = "id, description, agent, status, assigned_to, submitted, assigned, ended, result"

// limits returns the store's task limits with their defaults.
func (q *Queue) limits() task.Limits { return q.s.opts.TaskLimits.WithDefaults() }

func scanTask(sc interface{ Scan(...any) error }) (task.Task, error) {
	var (
		t                 task.Task
		status, submitted string
		assigned, ended   sql.NullString
	)
	if err := sc.Scan(&t.ID, &t.Description, &t.Agent, &status, &t.AssignedTo, &submitted, &assigned, &ended, &t.Result); err != nil {
		return t, err
	}
	t.Status = task.Status(status)
	var err error
	if t.Submitted, err = time.Parse(time.RFC3339Nano, submitted); err != nil {
		return t, fmt.Errorf("task %s: submitted: %w", t.ID, err)
	}
	if t.Assigned, err = parseTime(assigned); err != nil {
		return t, fmt.Errorf("task %s: assigned: %w", t.ID, err)
	}
	if t.Ended, err = parseTime(ended); err != nil {
		return t, fmt.Errorf("task %s: ended: %w", t.ID, err)
	}
	return t, nil
}

// update runs fn in a write transaction after failing overdue tasks.
func (q *Queue) update(ctx context.Context, fn func(tx *sql.Tx, now time.Time) error) ([]task.Task, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if q.s.isClosed() {
		return nil, ErrClosed
	}
	o := q.limits()
	now := q.s.opts.Now().UTC()
	tx, err := q.s.wdb.BeginTx(ctx, nil)
	if err != nil {
		return nil, q.err(ctx, err)
	}
	defer tx.Rollback()
	expired, err := q.expire(ctx, tx, now, o.Timeout)
	if err != nil {
		return nil, q.err(ctx, err)
	}
	if err := fn(tx, now); err != nil {
		if len(expired) > 0 && (errors.Is(err, task.ErrNotFound) || errors.Is(err, task.ErrEnded) || errors.Is(err, task.ErrNotAssigned)) {
			// Keep the expiry the error may report.
			if cerr := tx.Commit(); cerr != nil {
				return nil, q.err(ctx, cerr)
			}
		}
		return nil, err
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM tasks WHERE seq IN (
		SELECT seq FROM tasks WHERE status IN ('completed', 'failed') ORDER BY ended, seq
		LIMIT max(0, (SELECT count(*) FROM tasks WHERE status IN ('completed', 'failed')) - ?))`, o.MaxTasks); err != nil {
		return nil, q.err(ctx, err)
	}
	if err := tx.Commit(); err != nil {
		return nil, q.err(ctx, err)
	}
	return expired, nil
}

func (q *Queue) err(ctx context.Context, err error) error {
	if cerr := ctx.Err(); cerr != nil {
		return cerr
	}
	return fmt.Errorf("sqlitestore: task queue in %s: %w", q.s.path, err)
}

// expire fails the assigned tasks whose deadline has passed.
func (q *Queue) expire(ctx context.Context, tx *sql.Tx, now time.Time, timeout time.Duration) ([]task.Task, error) {
	rows, err := tx.QueryContext(ctx, "SELECT "+taskCols+" FROM tasks WHERE status = 'assigned' ORDER BY seq")
	if err != nil {
		return nil, err
	}
	var due []task.Task
	for rows.Next() {
		t, err := scanTask(rows)
		if err != nil {
			rows.Close()
			return nil, err
		}
		if now.Sub(t.Assigned) >= timeout {
			due = append(due, t)
		}
	}
	if err := rows.Close(); err != nil {
		return nil, err
	}
	for i := range due {
		t := &due[i]
		t.Status, t.Ended, t.Result = task.Failed, t.Assigned.Add(timeout), "no result after "+timeout.String()
		if _, err := tx.ExecContext(ctx, "UPDATE tasks SET status = 'failed', ended = ?, result = ? WHERE id = ?",
			t.Ended.Format(time.RFC3339Nano), t.Result, t.ID); err != nil {
			return nil, err
		}
	}
	return due, nil
}

// Submit adds a task for agentID ("" = any agent) and returns it, Pending,
// after [task.CheckSubmit] (see [task.Queue]).
func (q *Queue) Submit(ctx context.Context, description, agentID string) (task.Task, error) {
	description, err := task.CheckSubmit(description, agentID, q.limits().MaxDescription)
	if err != nil {
		return task.Task{}, err
	}
	var t task.Task
	_, err = q.update(ctx, func(tx *sql.Tx, now time.Time) error {
		res, err := tx.ExecContext(ctx, `INSERT INTO tasks (id, description, agent, status, assigned_to, submitted, result)
			VALUES ('new', ?, ?, 'pending', '', ?, '')`, description, agentID, now.Format(time.RFC3339Nano))
		if err != nil {
			return q.err(ctx, err)
		}
		seq, err := res.LastInsertId()
		if err != nil {
			return q.err(ctx, err)
		}
		t = task.Task{ID: fmt.Sprintf("task-%06d", seq), Description: description, Agent: agentID, Status: task.Pending, Submitted: now}
		if _, err := tx.ExecContext(ctx, "UPDATE tasks SET id = ? WHERE seq = ?", t.ID, seq); err != nil {
			return q.err(ctx, err)
		}
		return nil
	})
	if err != nil {
		return task.Task{}, err
	}
	return t, nil
}

// Next returns the task agentID should work on, claiming it (see
// [task.Source]); nil, nil when there is none.
func (q *Queue) Next(ctx context.Context, agentID string) (*task.Task, error) {
	if err := task.CheckAgent(agentID); err != nil {
		return nil, err
	}
	// Most cycles find no task: answer that from a read (Peek) on a read
	// connection, and take the single writer (outside the saves' group
	// commit) only when there is a task to claim or resume. A task
	// submitted meanwhile is found at the agent's next cycle.
	if t, err := q.Peek(ctx, agentID); err != nil || t == nil {
		return nil, err
	}
	var got *task.Task
	_, err := q.update(ctx, func(tx *sql.Tx, now time.Time) error {
		t, err := scanTask(tx.QueryRowContext(ctx, "SELECT "+taskCols+" FROM tasks WHERE status = 'assigned' AND assigned_to = ? ORDER BY seq LIMIT 1", agentID))
		if err == nil {
			got = &t
			return nil
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return q.err(ctx, err)
		}
		t, err = scanTask(tx.QueryRowContext(ctx, "SELECT "+taskCols+" FROM tasks WHERE status = 'pending' AND (agent = '' OR agent = ?) ORDER BY seq LIMIT 1", agentID))
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		if err != nil {
			return q.err(ctx, err)
		}
		t.Status, t.AssignedTo, t.Assigned = task.Assigned, agentID, now
		if _, err := tx.ExecContext(ctx, "UPDATE tasks SET status = 'assigned', assigned_to = ?, assigned = ? WHERE id = ?",
			agentID, now.Format(time.RFC3339Nano), t.ID); err != nil {
			return q.err(ctx, err)
		}
		got = &t
		return nil
	})
	if err != nil {
		return nil, err
	}
	return got, nil
}

// Peek returns the task Next would give agentID without claiming it; nil,
// nil when there is none.
func (q *Queue) Peek(ctx context.Context, agentID string) (*task.Task, error) {
	if err := task.CheckAgent(agentID); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	for _, query := range []string{
		"SELECT " + taskCols + " FROM tasks WHERE status = 'assigned' AND assigned_to = ? ORDER BY seq LIMIT 1",
		"SELECT " + taskCols + " FROM tasks WHERE status = 'pending' AND (agent = '' OR agent = ?) ORDER BY seq LIMIT 1",
	} {
		t, err := scanTask(q.s.rdb.QueryRowContext(ctx, query, agentID))
		if err == nil {
			return &t, nil
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return nil, q.err(ctx, err)
		}
	}
	return nil, nil
}

// Finish ends the assigned task id, completed when ok, else failed (see
// [task.Source]), with result cut to TaskLimits.MaxResult. Errors: [task.ErrNotFound],
// [task.ErrEnded], [task.ErrNotAssigned], ctx's error.
func (q *Queue) Finish(ctx context.Context, id string, ok bool, result string) (task.Task, error) {
	result = runes.Head(result, q.limits().MaxResult)
	var got task.Task
	_, err := q.update(ctx, func(tx *sql.Tx, now time.Time) error {
		t, err := scanTask(tx.QueryRowContext(ctx, "SELECT "+taskCols+" FROM tasks WHERE id = ?", id))
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("%w: %q", task.ErrNotFound, id)
		}
		if err != nil {
			return q.err(ctx, err)
		}
		if err := task.CheckEnd(t, task.Assigned); err != nil {
			return err
		}
		t.Status = task.Failed
		if ok {
			t.Status = task.Completed
		}
		t.Ended, t.Result = now, result
		if _, err := tx.ExecContext(ctx, "UPDATE tasks SET status = ?, ended = ?, result = ? WHERE id = ?",
			string(t.Status), now.Format(time.RFC3339Nano), result, id); err != nil {
			return q.err(ctx, err)
		}
		got = t
		return nil
	})
	if err != nil {
		return task.Task{}, err
	}
	return got, nil
}

// Cancel ends the pending task id as failed with result (cut to
// TaskLimits.MaxResult), in one transaction, so that no agent claims it
// (see [task.Queue]). Errors: [task.ErrNotFound], [task.ErrEnded],
// [task.ErrNotPending], ctx's error.
func (q *Queue) Cancel(ctx context.Context, id, result string) (task.Task, error) {
	result = runes.Head(result, q.limits().MaxResult)
	var got task.Task
	_, err := q.update(ctx, func(tx *sql.Tx, now time.Time) error {
		t, err := scanTask(tx.QueryRowContext(ctx, "SELECT "+taskCols+" FROM tasks WHERE id = ?", id))
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("%w: %q", task.ErrNotFound, id)
		}
		if err != nil {
			return q.err(ctx, err)
		}
		if err := task.CheckEnd(t, task.Pending); err != nil {
			return err
		}
		t.Status, t.Ended, t.Result = task.Failed, now, result
		if _, err := tx.ExecContext(ctx, "UPDATE tasks SET status = ?, ended = ?, result = ? WHERE id = ? AND status = ?",
			string(t.Status), now.Format(time.RFC3339Nano), result, id, string(task.Pending)); err != nil {
			return q.err(ctx, err)
		}
		got = t
		return nil
	})
	if err != nil {
		return task.Task{}, err
	}
	return got, nil
}

// Expire fails every assigned task without a result for Timeout (see
// [task.Queue]) and returns them oldest first.
func (q *Queue) Expire(ctx context.Context) ([]task.Task, error) {
	return q.update(ctx, func(*sql.Tx, time.Time) error { return nil })
}

// Get returns the task id. Errors: [task.ErrNotFound]; ctx's error.
func (q *Queue) Get(ctx context.Context, id string) (task.Task, error) {
	if err := ctx.Err(); err != nil {
		return task.Task{}, err
	}
	t, err := scanTask(q.s.rdb.QueryRowContext(ctx, "SELECT "+taskCols+" FROM tasks WHERE id = ?", id))
	if errors.Is(err, sql.ErrNoRows) {
		return task.Task{}, fmt.Errorf("%w: %q", task.ErrNotFound, id)
	}
	if err != nil {
		return task.Task{}, q.err(ctx, err)
	}
	return t, nil
}

// List returns every task kept, in submission order.
func (q *Queue) List(ctx context.Context) ([]task.Task, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	rows, err := q.s.rdb.QueryContext(ctx, "SELECT "+taskCols+" FROM tasks ORDER BY seq")
	if err != nil {
		return nil, q.err(ctx, err)
	}
	defer rows.Close()
	tasks := []task.Task{}
	for rows.Next() {
		t, err := scanTask(rows)
		if err != nil {
			return nil, q.err(ctx, err)
		}
		tasks = append(tasks, t)
	}
	if err := rows.Err(); err != nil {
		return nil, q.err(ctx, err)
	}
	return tasks, nil
}
