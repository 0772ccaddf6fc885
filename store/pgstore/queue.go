package pgstore

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/existence-loop/sdk/internal/runes"
	"github.com/existence-loop/sdk/task"
)

// Queue is the task queue of a [Store], kept in the table existence_tasks
// and shared by every process using the database. It is a [task.Queue]
// with the contract's semantics (task/tasktest checks them: ids
// "task-000042", statuses, errors, the 2-hour timeout). Get it with
// [Store.Tasks].
//
// A task is claimed with SELECT … FOR UPDATE SKIP LOCKED, so processes
// claim at once without waiting for each other or claiming a task twice.
// Next and Finish are fenced by the lease of the agent (see [Store.Save]):
// a process that lost an agent gets [ErrFenced] and changes nothing. A task
// claimed by a process that died stays assigned to its agent, and whoever
// takes the agent over gets it back from Next (the agent resumes its goal
// as after a restart), so no task is lost.
type Queue struct {
	s *Store
	// agent and epoch bind the queue to one agent's lease ([Fenced.Tasks]);
	// epoch -1: the leases the Store holds.
	agent string
	epoch int64
}

var _ task.Queue = (*Queue)(nil)

// fenceAt returns the epoch agentID's writes are checked against.
func (q *Queue) fenceAt(agentID string) (int64, error) {
	if q.epoch >= 0 && agentID == q.agent {
		return q.s.fenceAt(agentID, q.epoch)
	}
	return q.s.fenceOf(agentID)
}

var _ task.Source = (*Queue)(nil)

const taskCols = `seq, description, agent, status, assigned_to, submitted, assigned, ended, result`

func scanTask(r pgx.Row) (task.Task, error) {
	var t task.Task
	var seq int64
	var status string
	var submitted time.Time
	var assigned, ended pgtype.Timestamptz
	if err := r.Scan(&seq, &t.Description, &t.Agent, &status, &t.AssignedTo, &submitted, &assigned, &ended, &t.Result); err != nil {
		return t, err
	}
	t.ID, t.Status = taskID(seq), task.Status(status)
	t.Submitted = submitted.UTC()
	if a := finite(assigned); !a.IsZero() {
		t.Assigned = a.UTC()
	}
	if e := finite(ended); !e.IsZero() {
		t.Ended = e.UTC()
	}
	return t, nil
}

func taskID(seq int64) string { return fmt.Sprintf("task-%06d", seq) }

func parseTaskID(id string) (int64, error) {
	n, err := strconv.ParseInt(strings.TrimPrefix(id, "task-"), 10, 64)
	if err != nil || !strings.HasPrefix(id, "task-") || n <= 0 {
		return 0, fmt.Errorf("%w: %q", task.ErrNotFound, id)
	}
	return n, nil
}

// Submit adds a task for agentID ("" = any agent) and returns it, Pending.
// The description is trimmed and cut to Options.MaxDescription characters.
// Errors: [task.ErrInvalid] for a blank description or a bad agent id;
// the database's error.
func (q *Queue) Submit(ctx context.Context, description, agentID string) (task.Task, error) {
	description, err := task.CheckSubmit(description, agentID, q.s.opts.MaxDescription)
	if err != nil {
		return task.Task{}, err
	}
	defer q.s.emptyQueue.changed()
	t, err := scanTask(q.s.pool.QueryRow(ctx, `INSERT INTO existence_tasks (description, agent, status, submitted)
		VALUES ($1, $2, 'pending', date_trunc('milliseconds', now())) RETURNING `+taskCols, description, agentID))
	if err != nil {
		return task.Task{}, fmt.Errorf("pgstore: submit: %w", err)
	}
	return t, nil
}

// fence checks, inside tx, that this process may write for agentID (see
// [Store.Save]) and locks the lease row FOR SHARE until tx ends. It returns
// the epoch written with the task.
func (q *Queue) fence(ctx context.Context, tx pgx.Tx, agentID string) (int64, error) {
	epoch, err := q.fenceAt(agentID)
	if err != nil {
		return 0, err
	}
	var cur int64
	err = tx.QueryRow(ctx, `SELECT epoch FROM existence_leases
		WHERE agent_id = $1 AND CASE WHEN $2::bigint >= 0
			THEN epoch = $2 AND owner IS NOT NULL AND expires_at > now()
			ELSE owner IS NULL OR expires_at <= now() END
		FOR SHARE`, agentID, epoch).Scan(&cur)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, q.s.fenceError(ctx, agentID, epoch)
	}
	if err != nil {
		return 0, fmt.Errorf("pgstore: %w", err)
	}
	return cur, nil
}

// expire fails the assigned tasks overdue by Options.TaskTimeout.
func (q *Queue) expire(ctx context.Context, tx pgx.Tx) ([]task.Task, error) {
	d := q.s.opts.TaskTimeout
	rows, err := tx.Query(ctx, `UPDATE existence_tasks
		SET status = 'failed', ended = assigned + make_interval(secs => $1), result = $2
		WHERE status = 'assigned' AND assigned <= now() - make_interval(secs => $1)
		RETURNING `+taskCols, d.Seconds(), "no result after "+d.String())
	if err != nil {
		return nil, fmt.Errorf("pgstore: expire: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (task.Task, error) { return scanTask(r) })
	if err != nil {
		return nil, fmt.Errorf("pgstore: expire: %w", err)
	}
	return out, nil
}

// Next implements [task.Source]: it returns the task already
// assigned to agentID (so the agent, or whoever took it over, resumes it),
// else claims the oldest pending task for agentID or for any agent, or
// returns nil when there is none. Overdue tasks are failed first. Errors:
// [task.ErrInvalid] for a bad id; [ErrFenced] when this process lost
// the agent's lease (nothing is claimed); the database's error.
//
// Every cycle of every agent asks, and most find nothing: so Next first
// asks a probe shared with the other Next calls waiting (one read-only
// statement for up to Options.MaxBatch agents, gathered as the saves
// are, see "Group commit" in the package documentation), and returns nil
// at once for an agent whose fence holds and which has nothing to claim
// (no task assigned to it, none pending for it or for any agent, none
// overdue). Any other agent runs the claiming transaction, which decides,
// and reports a lost lease. When a probe finds no open task at all (none
// pending, none assigned), the Next calls of the next 100 ms (by
// Options.Now) return nil without a statement, the lease checked by this
// process's clock only (nothing is claimed, so nothing needs fencing): a
// task another process submits meanwhile is claimed up to 100 ms later,
// at the agent's next cycle; a Submit, claim or Finish through this Store
// ends the window at once.
func (q *Queue) Next(ctx context.Context, agentID string) (*task.Task, error) {
	if err := task.CheckAgent(agentID); err != nil {
		return nil, err
	}
	if epoch, err := q.fenceAt(agentID); err == nil {
		if epoch < 0 {
			if err := q.s.ensureAgent(ctx, agentID); err != nil {
				return nil, err
			}
		}
		idle, err := q.s.probe(ctx, agentID, epoch)
		if err != nil {
			return nil, err
		}
		if idle {
			return nil, nil
		}
	}
	q.s.count.taskClaims.Add(1)
	defer q.s.emptyQueue.changed()
	var got *task.Task
	err := pgx.BeginFunc(ctx, q.s.pool, func(tx pgx.Tx) error {
		epoch, err := q.fence(ctx, tx, agentID)
		if err != nil {
			return err
		}
		if _, err := q.expire(ctx, tx); err != nil {
			return err
		}
		t, err := scanTask(tx.QueryRow(ctx, `UPDATE existence_tasks SET epoch = $2
			WHERE seq = (SELECT seq FROM existence_tasks WHERE status = 'assigned' AND assigned_to = $1 ORDER BY seq LIMIT 1)
			RETURNING `+taskCols, agentID, epoch))
		if err == nil {
			got = &t
			return nil
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		t, err = scanTask(tx.QueryRow(ctx, `UPDATE existence_tasks t
			SET status = 'assigned', assigned_to = $1, assigned = date_trunc('milliseconds', now()), epoch = $2
			FROM (SELECT seq FROM existence_tasks WHERE status = 'pending' AND (agent = '' OR agent = $1)
			      ORDER BY seq LIMIT 1 FOR UPDATE SKIP LOCKED) c
			WHERE t.seq = c.seq RETURNING `+strings.ReplaceAll(taskCols, "seq,", "t.seq,"), agentID, epoch))
		if err == nil {
			got = &t
			return nil
		}
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		return err
	})
	if err != nil {
		return nil, wrap("next", err)
	}
	return got, nil
}

// Peek implements [task.Source]: the task Next would return,
// without claiming it or expiring anything; nil when there is none.
func (q *Queue) Peek(ctx context.Context, agentID string) (*task.Task, error) {
	if err := task.CheckAgent(agentID); err != nil {
		return nil, err
	}
	t, err := scanTask(q.s.pool.QueryRow(ctx, `SELECT `+taskCols+` FROM existence_tasks
		WHERE (status = 'assigned' AND assigned_to = $1) OR (status = 'pending' AND (agent = '' OR agent = $1))
		ORDER BY status = 'assigned' DESC, seq LIMIT 1`, agentID))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("pgstore: peek: %w", err)
	}
	return &t, nil
}

// Finish implements [task.Source]: it ends the assigned task id,
// Completed when ok, else Failed, with result (cut to Options.MaxResult
// characters). It is fenced by the lease of the agent the task is
// assigned to. Errors: [task.ErrNotFound]; [task.ErrEnded]
// (also for a result after the timeout); [task.ErrNotAssigned];
// [ErrFenced]; the database's error.
func (q *Queue) Finish(ctx context.Context, id string, ok bool, result string) (task.Task, error) {
	seq, err := parseTaskID(id)
	if err != nil {
		return task.Task{}, err
	}
	result = runes.Head(result, q.s.opts.MaxResult)
	defer q.s.emptyQueue.changed()
	status := task.Failed
	if ok {
		status = task.Completed
	}
	var got task.Task
	err = pgx.BeginFunc(ctx, q.s.pool, func(tx pgx.Tx) error {
		if _, err := q.expire(ctx, tx); err != nil {
			return err
		}
		t, err := scanTask(tx.QueryRow(ctx, `SELECT `+taskCols+` FROM existence_tasks WHERE seq = $1 FOR UPDATE`, seq))
		if errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("%w: %q", task.ErrNotFound, id)
		}
		if err != nil {
			return err
		}
		if err := task.CheckEnd(t, task.Assigned); err != nil {
			return err
		}
		if _, err := q.fence(ctx, tx, t.AssignedTo); err != nil {
			return err
		}
		got, err = scanTask(tx.QueryRow(ctx, `UPDATE existence_tasks SET status = $2, ended = date_trunc('milliseconds', now()), result = $3
			WHERE seq = $1 RETURNING `+taskCols, seq, string(status), result))
		return err
	})
	if err != nil {
		return task.Task{}, wrap("finish", err)
	}
	return got, nil
}

// Cancel ends the pending task id as failed with result (cut to
// Options.MaxResult), under the row's lock, so that no agent claims it
// (see [task.Queue]). Errors: [task.ErrNotFound], [task.ErrEnded],
// [task.ErrNotPending], ctx's or the database's error.
func (q *Queue) Cancel(ctx context.Context, id, result string) (task.Task, error) {
	seq, err := parseTaskID(id)
	if err != nil {
		return task.Task{}, err
	}
	result = runes.Head(result, q.s.opts.MaxResult)
	defer q.s.emptyQueue.changed()
	var got task.Task
	err = pgx.BeginFunc(ctx, q.s.pool, func(tx pgx.Tx) error {
		t, err := scanTask(tx.QueryRow(ctx, `SELECT `+taskCols+` FROM existence_tasks WHERE seq = $1 FOR UPDATE`, seq))
		if errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("%w: %q", task.ErrNotFound, id)
		}
		if err != nil {
			return err
		}
		if err := task.CheckEnd(t, task.Pending); err != nil {
			return err
		}
		got, err = scanTask(tx.QueryRow(ctx, `UPDATE existence_tasks SET status = 'failed', ended = date_trunc('milliseconds', now()), result = $2
			WHERE seq = $1 RETURNING `+taskCols, seq, result))
		return err
	})
	if err != nil {
		return task.Task{}, wrap("cancel", err)
	}
	return got, nil
}

// Expire fails every assigned task overdue by Options.TaskTimeout and
// returns them (Next and Finish do it too).
func (q *Queue) Expire(ctx context.Context) ([]task.Task, error) {
	var out []task.Task
	err := pgx.BeginFunc(ctx, q.s.pool, func(tx pgx.Tx) error {
		var err error
		out, err = q.expire(ctx, tx)
		return err
	})
	return out, err
}

// Get returns the task id. Errors: [task.ErrNotFound]; the
// database's error.
func (q *Queue) Get(ctx context.Context, id string) (task.Task, error) {
	seq, err := parseTaskID(id)
	if err != nil {
		return task.Task{}, err
	}
	t, err := scanTask(q.s.pool.QueryRow(ctx, `SELECT `+taskCols+` FROM existence_tasks WHERE seq = $1`, seq))
	if errors.Is(err, pgx.ErrNoRows) {
		return task.Task{}, fmt.Errorf("%w: %q", task.ErrNotFound, id)
	}
	if err != nil {
		return task.Task{}, fmt.Errorf("pgstore: get: %w", err)
	}
	return t, nil
}

// List returns every task in submission order.
func (q *Queue) List(ctx context.Context) ([]task.Task, error) {
	rows, err := q.s.pool.Query(ctx, `SELECT `+taskCols+` FROM existence_tasks ORDER BY seq`)
	if err != nil {
		return nil, fmt.Errorf("pgstore: list tasks: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (task.Task, error) { return scanTask(r) })
	if err != nil {
		return nil, fmt.Errorf("pgstore: list tasks: %w", err)
	}
	return out, nil
}

// wrap prefixes database errors with the operation and leaves this
// package's and package task's typed errors as they are.
func wrap(op string, err error) error {
	var fe *FencedError
	if errors.As(err, &fe) || errors.Is(err, task.ErrNotFound) || errors.Is(err, task.ErrEnded) ||
		errors.Is(err, task.ErrNotAssigned) || strings.HasPrefix(err.Error(), "pgstore:") {
		return err
	}
	return fmt.Errorf("pgstore: %s: %w", op, err)
}
