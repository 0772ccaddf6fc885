package taskqueue

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/internal/docfile"
	"github.com/existence-loop/sdk/internal/runes"
)

// Status is where a [Task] is in its lifecycle: [Pending] → [Assigned] →
// [Completed] or [Failed]. Completed and Failed are final ("ended").
type Status string

// Task statuses.
const (
	// Pending: submitted, not yet claimed by an agent.
	Pending Status = "pending"
	// Assigned: claimed by an agent ([Queue.Next]), waiting for its result.
	Assigned Status = "assigned"
	// Completed: the agent finished it successfully ([Queue.Finish] with ok).
	Completed Status = "completed"
	// Failed: the agent failed it ([Queue.Finish] without ok), or it had no
	// result within [Options.Timeout] of being assigned ([Queue.Expire]).
	Failed Status = "failed"
)

// Ended reports whether s is a final status ([Completed] or [Failed]).
func (s Status) Ended() bool { return s == Completed || s == Failed }

func (s Status) valid() bool {
	return s == Pending || s == Assigned || s == Completed || s == Failed
}

// Task is one externally assigned task (shown to the agent as
// spec §2 row 1, "ASSIGNED TASK: {description}"). Values returned by a
// [Queue] are copies the caller owns.
type Task struct {
	// ID is unique within the queue: "task-" and a zero-padded sequence
	// number, e.g. "task-000042". IDs are never reused by a queue.
	ID string `json:"id"`
	// Description is what to do: non-blank, at most [Options.MaxDescription]
	// characters (Unicode code points).
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
	// instant its deadline passed (Assigned + Timeout); zero until then.
	Ended time.Time `json:"ended,omitzero"`
	// Result is the agent's result (or failure reason), at most
	// [Options.MaxResult] characters; "" until the task ends.
	Result string `json:"result,omitempty"`
}

// Options configure a [Queue]. The zero value gives the defaults.
type Options struct {
	// Now tells the time; default time.Now. Inject a fake clock in tests.
	Now func() time.Time
	// Timeout is how long an assigned task may go without a result before
	// it is failed ("a task with no result after 2 hours is
	// failed"); zero or negative means the default, 2h.
	Timeout time.Duration
	// MaxDescription is the maximum description length in characters
	// (Unicode code points); longer descriptions are cut. Default 2000.
	MaxDescription int
	// MaxResult is the maximum result length in characters; longer results
	// are cut. Default 2000.
	MaxResult int
	// MaxTasks is how many ended (completed or failed) tasks are kept;
	// beyond it the oldest ended tasks are dropped first. Pending and
	// assigned tasks are never dropped. Default 1000.
	MaxTasks int
	// FreshOnCorrupt makes [Open] move a corrupt queue file aside (see
	// [Quarantine]) and start with an empty queue, instead of failing with
	// a [*CorruptError]. The move is logged through Logger (level Warn)
	// and reported by [Queue.Quarantined] (issue 10: the same policy as
	// agent state).
	FreshOnCorrupt bool
	// Logger receives the reports of [Open] (a corrupt file moved aside,
	// temp files removed). Nil means [slog.Default].
	Logger *slog.Logger
}

// Defaults for [Options].
const (
	DefaultTimeout        = 2 * time.Hour
	DefaultMaxDescription = 2000
	DefaultMaxResult      = 2000
	DefaultMaxTasks       = 1000
)

func (o Options) withDefaults() Options {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.MaxDescription <= 0 {
		o.MaxDescription = DefaultMaxDescription
	}
	if o.MaxResult <= 0 {
		o.MaxResult = DefaultMaxResult
	}
	if o.MaxTasks <= 0 {
		o.MaxTasks = DefaultMaxTasks
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return o
}

// Errors returned by a [Queue]. Match them with errors.Is.
var (
	// ErrInvalid: a blank description, or an invalid agent id (see
	// [identity.ValidateID]).
	ErrInvalid = errors.New("taskqueue: invalid argument")
	// ErrNotFound: no task has the given id (it never existed, or it ended
	// long ago and was dropped, see [Options.MaxTasks]).
	ErrNotFound = errors.New("taskqueue: no such task")
	// ErrEnded: the task already ended (completed, failed or expired); its
	// state is unchanged.
	ErrEnded = errors.New("taskqueue: task already ended")
	// ErrNotAssigned: [Queue.Finish] on a task that no agent has claimed.
	ErrNotAssigned = errors.New("taskqueue: task not assigned")
	// ErrCorrupt: the queue file cannot be used (a [*CorruptError] says
	// which file and why). It is never overwritten.
	ErrCorrupt = errors.New("taskqueue: corrupt queue file")
	// ErrFull: the queue file would grow past its size limit with pending
	// and assigned tasks alone; the submission is refused.
	ErrFull = errors.New("taskqueue: queue full")
)

// CorruptError reports a queue file that cannot be used: which file and
// why. It matches [ErrCorrupt] with errors.Is. The file is left untouched
// for a person to inspect or repair.
type CorruptError struct {
	// Path is the queue file.
	Path string
	// Reason says what is wrong, e.g. "tasks[3]: duplicate id task-000004".
	Reason string
	// Err is the underlying error, if any.
	Err error
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("taskqueue: corrupt queue file %s: %s", e.Path, e.Reason)
}

// Unwrap returns the underlying error.
func (e *CorruptError) Unwrap() error { return e.Err }

// Is reports whether target is [ErrCorrupt].
func (e *CorruptError) Is(target error) bool { return target == ErrCorrupt }

// Queue is a queue of externally assigned tasks shared by the agents of one
// state directory. Create it with [Open] (durable, shared between
// processes) or [NewMemory]. All methods are safe for concurrent use. A
// Queue holds no file open between calls, so it needs no Close.
type Queue struct {
	opts Options
	// sem is the in-process lock (a channel so that waiting honours ctx).
	sem chan struct{}
	// store is where the document lives between calls.
	store store
	// quarantined is where Open moved a corrupt file (FreshOnCorrupt).
	quarantined string
}

// Quarantined returns where [Open] moved a corrupt queue file aside under
// Options.FreshOnCorrupt, or "" when it moved nothing.
func (q *Queue) Quarantined() string { return q.quarantined }

// store loads and saves the queue document. Updates are serialised by
// Queue.sem, and Lock adds the cross-process lock; Load may also run
// concurrently with them (for reads) and must see a complete version.
// Save's liveLimit applies the submission size limit (files only).
type store interface {
	docfile.Store[document]
	Save(d *document, liveLimit bool) error
}

func newQueue(opts Options, s store) *Queue {
	return &Queue{opts: opts.withDefaults(), sem: make(chan struct{}, 1), store: s}
}

// NewMemory returns a Queue kept in memory only, for tests and for
// embedding without persistence. Its tasks are lost when the process ends.
func NewMemory(opts Options) *Queue {
	return newQueue(opts, memStore{docfile.NewMemory(format)})
}

// now returns the current time in UTC without a monotonic reading, so
// that values compare the same before and after a round trip through the
// file.
func (q *Queue) now() time.Time { return q.opts.Now().UTC() }

// update runs fn on the current document under both locks, after failing
// overdue tasks (passed to fn as expired), and saves the document when
// anything changed. fn must not change d when it returns an error; the
// expiry is still saved then, so that readers see what the error reported.
func (q *Queue) update(ctx context.Context, liveLimit bool, fn func(d *document, now time.Time, expired []Task) (changed bool, err error)) error {
	return docfile.Update(ctx, q.sem, q.store, func(d *document) error {
		now := q.now()
		expired := d.expire(now, q.opts.Timeout)
		changed, err := fn(d, now, expired)
		if !changed && len(expired) == 0 {
			return err
		}
		d.trim(q.opts.MaxTasks)
		if saveErr := q.store.Save(d, liveLimit && err == nil); saveErr != nil {
			return errors.Join(err, saveErr)
		}
		return err
	})
}

// view runs fn on a snapshot of the document. Saves replace the file by
// atomic rename, so a snapshot is always one complete version and needs
// neither lock: reads never wait for writers.
func (q *Queue) view(ctx context.Context, fn func(d *document)) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	d, err := q.store.Load()
	if err != nil {
		return err
	}
	fn(d)
	return nil
}

// Submit adds a task for agentID ("" = any agent) and returns it, Pending.
// The description is trimmed of surrounding white space and cut to
// [Options.MaxDescription] characters. Errors: [ErrInvalid] for a blank
// description or an invalid agent id; [ErrCorrupt]; [ErrFull] (file queues,
// see [MaxFileSize]); ctx's error.
func (q *Queue) Submit(ctx context.Context, description, agentID string) (Task, error) {
	description = strings.TrimSpace(description)
	if description == "" {
		return Task{}, fmt.Errorf("%w: blank task description", ErrInvalid)
	}
	if agentID != "" {
		if err := identity.ValidateID(agentID); err != nil {
			return Task{}, fmt.Errorf("%w: %w", ErrInvalid, err)
		}
	}
	description = runes.Head(description, q.opts.MaxDescription)
	var t Task
	err := q.update(ctx, true, func(d *document, now time.Time, _ []Task) (bool, error) {
		t = Task{
			ID:          d.newID(),
			Description: description,
			Agent:       agentID,
			Status:      Pending,
			Submitted:   now,
		}
		d.Tasks = append(d.Tasks, t)
		return true, nil
	})
	if err != nil {
		return Task{}, err
	}
	return t, nil
}

// Next returns the task agentID should work on, or nil when there is none.
// It first fails overdue tasks (as [Queue.Expire] does). If a task is
// already assigned to agentID, Next returns it, so an agent resumes its
// task after a restart. Otherwise it claims the oldest pending task that is
// for agentID or for any agent, marks it [Assigned] to agentID and returns
// it. Errors: [ErrInvalid] for an invalid agent id; [ErrCorrupt]; ctx's
// error.
func (q *Queue) Next(ctx context.Context, agentID string) (*Task, error) {
	if err := identity.ValidateID(agentID); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	var got *Task
	err := q.update(ctx, false, func(d *document, now time.Time, _ []Task) (bool, error) {
		for i := range d.Tasks {
			if t := &d.Tasks[i]; t.Status == Assigned && t.AssignedTo == agentID {
				c := *t
				got = &c
				return false, nil
			}
		}
		for i := range d.Tasks {
			t := &d.Tasks[i]
			if t.Status != Pending || (t.Agent != "" && t.Agent != agentID) {
				continue
			}
			t.Status, t.AssignedTo, t.Assigned = Assigned, agentID, now
			c := *t
			got = &c
			return true, nil
		}
		return false, nil
	})
	if err != nil {
		return nil, err
	}
	return got, nil
}

// Peek returns the task [Queue.Next] would give agentID — the task already
// assigned to it, else the oldest pending task for it or for any agent —
// without claiming it or changing anything (overdue tasks are not expired).
// It returns nil when there is none. Dry runs and previews use it. Errors:
// [ErrInvalid] for a bad agent id, [ErrCorrupt], ctx's error.
func (q *Queue) Peek(ctx context.Context, agentID string) (*Task, error) {
	if err := identity.ValidateID(agentID); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	var got *Task
	err := q.view(ctx, func(d *document) {
		for _, t := range d.Tasks {
			if t.Status == Assigned && t.AssignedTo == agentID {
				got = &t
				return
			}
		}
		for _, t := range d.Tasks {
			if t.Status == Pending && (t.Agent == "" || t.Agent == agentID) {
				got = &t
				return
			}
		}
	})
	if err != nil {
		return nil, err
	}
	return got, nil
}

// Finish ends the assigned task id: [Completed] when ok, else [Failed],
// with result (cut to [Options.MaxResult] characters) and the current time
// as Ended. It returns the ended task. Overdue tasks are failed first, so a
// result that arrives after the timeout gets [ErrEnded]. Errors:
// [ErrNotFound]; [ErrEnded] when the task already ended (state unchanged);
// [ErrNotAssigned] for a pending task; [ErrCorrupt]; ctx's error.
func (q *Queue) Finish(ctx context.Context, id string, ok bool, result string) (Task, error) {
	result = runes.Head(result, q.opts.MaxResult)
	var got Task
	err := q.update(ctx, false, func(d *document, now time.Time, _ []Task) (bool, error) {
		i := d.index(id)
		if i < 0 {
			return false, fmt.Errorf("%w: %q", ErrNotFound, id)
		}
		t := &d.Tasks[i]
		switch t.Status {
		case Pending:
			return false, fmt.Errorf("%w: %s is pending", ErrNotAssigned, id)
		case Completed, Failed:
			return false, fmt.Errorf("%w: %s is %s", ErrEnded, id, t.Status)
		}
		t.Status = Failed
		if ok {
			t.Status = Completed
		}
		t.Ended, t.Result = now, result
		got = *t
		return true, nil
	})
	if err != nil {
		return Task{}, err
	}
	return got, nil
}

// Expire fails every assigned task that has had no result for
// [Options.Timeout] or longer since it was assigned, with a Result such as
// "no result after 2h0m0s" and Ended set to the deadline (Assigned +
// Timeout). It returns the tasks it failed, oldest first (nil when none).
// [Queue.Next], [Queue.Submit] and [Queue.Finish] do the same first.
// Errors: [ErrCorrupt]; ctx's error.
func (q *Queue) Expire(ctx context.Context) ([]Task, error) {
	var expired []Task
	err := q.update(ctx, false, func(_ *document, _ time.Time, e []Task) (bool, error) {
		expired = e
		return false, nil
	})
	if err != nil {
		return nil, err
	}
	return expired, nil
}

// Get returns the task id as stored. Errors: [ErrNotFound]; [ErrCorrupt];
// ctx's error.
func (q *Queue) Get(ctx context.Context, id string) (Task, error) {
	var (
		got Task
		ok  bool
	)
	err := q.view(ctx, func(d *document) {
		if i := d.index(id); i >= 0 {
			got, ok = d.Tasks[i], true
		}
	})
	if err != nil {
		return Task{}, err
	}
	if !ok {
		return Task{}, fmt.Errorf("%w: %q", ErrNotFound, id)
	}
	return got, nil
}

// List returns all tasks as stored, in submission order. Overdue assigned
// tasks are shown as assigned until a call that expires them ([Queue.Expire]
// or any other update). Errors: [ErrCorrupt]; ctx's error.
func (q *Queue) List(ctx context.Context) ([]Task, error) {
	var got []Task
	err := q.view(ctx, func(d *document) { got = slices.Clone(d.Tasks) })
	if err != nil {
		return nil, err
	}
	return got, nil
}

// memStore keeps the document in memory; a submission's size limit does
// not apply there.
type memStore struct {
	*docfile.Memory[document, Task]
}

func (m memStore) Save(d *document, _ bool) error { return m.Memory.Save(d) }
