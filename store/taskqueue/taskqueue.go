package taskqueue

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/existence-loop/sdk/internal/docfile"
	"github.com/existence-loop/sdk/internal/runes"
	"github.com/existence-loop/sdk/task"
)

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
	// a [*identity.CorruptError]. The move is logged through Logger (level Warn)
	// and reported by [Queue.Quarantined]: the same policy as agent state
	// (existence.Config.FreshOnCorrupt).
	FreshOnCorrupt bool
	// Logger receives the reports of [Open] (a corrupt file moved aside,
	// temp files removed). Nil means [slog.Default].
	Logger *slog.Logger
}

func (o Options) withDefaults() Options {
	if o.Now == nil {
		o.Now = time.Now
	}
	l := task.Limits{Timeout: o.Timeout, MaxDescription: o.MaxDescription, MaxResult: o.MaxResult, MaxTasks: o.MaxTasks}.WithDefaults()
	o.Timeout, o.MaxDescription, o.MaxResult, o.MaxTasks = l.Timeout, l.MaxDescription, l.MaxResult, l.MaxTasks
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return o
}

// Queue is a queue of externally assigned tasks shared by the agents of one
// state directory. Create it with [Open] (durable, shared between
// processes) or [NewMemory]. All methods are safe for concurrent use.
// Its errors are those of package task ([task.ErrInvalid],
// [task.ErrNotFound], [task.ErrEnded], [task.ErrNotAssigned],
// [task.ErrFull]) and a [*identity.CorruptError] (matching
// [identity.ErrCorrupt]) for a queue file that cannot be used. A
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

var _ task.Queue = (*Queue)(nil)

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
func (q *Queue) update(ctx context.Context, liveLimit bool, fn func(d *document, now time.Time, expired []task.Task) (changed bool, err error)) error {
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

// Submit adds a task for agentID ("" = any agent) and returns it, pending.
// The description is trimmed of surrounding white space and cut to
// [Options.MaxDescription] characters. Errors: [task.ErrInvalid] for a blank
// description or an invalid agent id; [identity.ErrCorrupt]; [task.ErrFull] (file queues,
// see [MaxFileSize]); ctx's error.
func (q *Queue) Submit(ctx context.Context, description, agentID string) (task.Task, error) {
	description, err := task.CheckSubmit(description, agentID, q.opts.MaxDescription)
	if err != nil {
		return task.Task{}, err
	}
	var t task.Task
	err = q.update(ctx, true, func(d *document, now time.Time, _ []task.Task) (bool, error) {
		t = task.Task{
			ID:          d.newID(),
			Description: description,
			Agent:       agentID,
			Status:      task.Pending,
			Submitted:   now,
		}
		d.Tasks = append(d.Tasks, t)
		return true, nil
	})
	if err != nil {
		return task.Task{}, err
	}
	return t, nil
}

// Next returns the task agentID should work on, or nil when there is none.
// It first fails overdue tasks (as [Queue.Expire] does). If a task is
// already assigned to agentID, Next returns it, so an agent resumes its
// task after a restart. Otherwise it claims the oldest pending task that is
// for agentID or for any agent, marks it [task.Assigned] to agentID and returns
// it. Errors: [task.ErrInvalid] for an invalid agent id; [identity.ErrCorrupt]; ctx's
// error.
func (q *Queue) Next(ctx context.Context, agentID string) (*task.Task, error) {
	if err := task.CheckAgent(agentID); err != nil {
		return nil, err
	}
	var got *task.Task
	err := q.update(ctx, false, func(d *document, now time.Time, _ []task.Task) (bool, error) {
		for i := range d.Tasks {
			if t := &d.Tasks[i]; t.Status == task.Assigned && t.AssignedTo == agentID {
				c := *t
				got = &c
				return false, nil
			}
		}
		for i := range d.Tasks {
			t := &d.Tasks[i]
			if t.Status != task.Pending || (t.Agent != "" && t.Agent != agentID) {
				continue
			}
			t.Status, t.AssignedTo, t.Assigned = task.Assigned, agentID, now
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
// [task.ErrInvalid] for a bad agent id, [identity.ErrCorrupt], ctx's error.
func (q *Queue) Peek(ctx context.Context, agentID string) (*task.Task, error) {
	if err := task.CheckAgent(agentID); err != nil {
		return nil, err
	}
	var got *task.Task
	err := q.view(ctx, func(d *document) {
		for _, t := range d.Tasks {
			if t.Status == task.Assigned && t.AssignedTo == agentID {
				got = &t
				return
			}
		}
		for _, t := range d.Tasks {
			if t.Status == task.Pending && (t.Agent == "" || t.Agent == agentID) {
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

// Finish ends the assigned task id: [task.Completed] when ok, else [task.Failed],
// with result (cut to [Options.MaxResult] characters) and the current time
// as Ended. It returns the ended task. Overdue tasks are failed first, so a
// result that arrives after the timeout gets [task.ErrEnded]. Errors:
// [task.ErrNotFound]; [task.ErrEnded] when the task already ended (state unchanged);
// [task.ErrNotAssigned] for a pending task; [identity.ErrCorrupt]; ctx's error.
func (q *Queue) Finish(ctx context.Context, id string, ok bool, result string) (task.Task, error) {
	result = runes.Head(result, q.opts.MaxResult)
	var got task.Task
	err := q.update(ctx, false, func(d *document, now time.Time, _ []task.Task) (bool, error) {
		i := d.index(id)
		if i < 0 {
			return false, fmt.Errorf("%w: %q", task.ErrNotFound, id)
		}
		t := &d.Tasks[i]
		if err := task.CheckEnd(*t, task.Assigned); err != nil {
			return false, err
		}
		t.Status = task.Failed
		if ok {
			t.Status = task.Completed
		}
		t.Ended, t.Result = now, result
		got = *t
		return true, nil
	})
	if err != nil {
		return task.Task{}, err
	}
	return got, nil
}

// Cancel ends the pending task id as [task.Failed] with result (cut to
// [Options.MaxResult] characters) and the current time as Ended, in the
// same update that Next claims in, so that no agent ever claims it. It
// returns the ended task. Errors: [task.ErrNotFound]; [task.ErrEnded] when
// the task already ended (state unchanged); [task.ErrNotPending] when an
// agent has claimed it; [identity.ErrCorrupt]; ctx's error.
func (q *Queue) Cancel(ctx context.Context, id, result string) (task.Task, error) {
	result = runes.Head(result, q.opts.MaxResult)
	var got task.Task
	err := q.update(ctx, false, func(d *document, now time.Time, _ []task.Task) (bool, error) {
		i := d.index(id)
		if i < 0 {
			return false, fmt.Errorf("%w: %q", task.ErrNotFound, id)
		}
		t := &d.Tasks[i]
		if err := task.CheckEnd(*t, task.Pending); err != nil {
			return false, err
		}
		t.Status, t.Ended, t.Result = task.Failed, now, result
		got = *t
		return true, nil
	})
	if err != nil {
		return task.Task{}, err
	}
	return got, nil
}

// Expire fails every assigned task that has had no result for
// [Options.Timeout] or longer since it was assigned, with a Result such as
// "no result after 2h0m0s" and Ended set to the deadline (Assigned +
// Timeout). It returns the tasks it failed, oldest first (nil when none).
// [Queue.Next], [Queue.Submit] and [Queue.Finish] do the same first.
// Errors: [identity.ErrCorrupt]; ctx's error.
func (q *Queue) Expire(ctx context.Context) ([]task.Task, error) {
	var expired []task.Task
	err := q.update(ctx, false, func(_ *document, _ time.Time, e []task.Task) (bool, error) {
		expired = e
		return false, nil
	})
	if err != nil {
		return nil, err
	}
	return expired, nil
}

// Get returns the task id as stored. Errors: [task.ErrNotFound]; [identity.ErrCorrupt];
// ctx's error.
func (q *Queue) Get(ctx context.Context, id string) (task.Task, error) {
	var (
		got task.Task
		ok  bool
	)
	err := q.view(ctx, func(d *document) {
		if i := d.index(id); i >= 0 {
			got, ok = d.Tasks[i], true
		}
	})
	if err != nil {
		return task.Task{}, err
	}
	if !ok {
		return task.Task{}, fmt.Errorf("%w: %q", task.ErrNotFound, id)
	}
	return got, nil
}

// List returns all tasks as stored, in submission order. Overdue assigned
// tasks are shown as assigned until a call that expires them ([Queue.Expire]
// or any other update). Errors: [identity.ErrCorrupt]; ctx's error.
func (q *Queue) List(ctx context.Context) ([]task.Task, error) {
	var got []task.Task
	err := q.view(ctx, func(d *document) { got = slices.Clone(d.Tasks) })
	if err != nil {
		return nil, err
	}
	return got, nil
}

// memStore keeps the document in memory; a submission's size limit does
// not apply there.
type memStore struct {
	*docfile.Memory[document, task.Task]
}

func (m memStore) Save(d *document, _ bool) error { return m.Memory.Save(d) }
