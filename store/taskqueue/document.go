package taskqueue

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/internal/docfile"
	"github.com/existence-loop/sdk/task"
)

// schemaVersion is the version of the queue file format written by this
// package. Files from a newer version are refused, never rewritten.
const schemaVersion = 1

// document is the queue file's content.
type document struct {
	// Version is the schema version of the file format.
	Version int `json:"version"`
	// Seq is the number of the last task id handed out; it only grows, so
	// ids are never reused.
	Seq uint64 `json:"seq"`
	// Tasks are in submission order.
	Tasks []task.Task `json:"tasks"`
}

// format is the queue file's format (see [docfile.Format]).
var format = &docfile.Format[document, task.Task]{
	Version:  schemaVersion,
	List:     "tasks",
	Fields:   func(d *document) (*int, *[]task.Task) { return &d.Version, &d.Tasks },
	ID:       func(t task.Task) string { return t.ID },
	Validate: validateTask,
	Corrupt: func(path, reason string, err error) error {
		return &identity.CorruptError{Kind: "queue file", Path: path, Reason: reason, Err: err}
	},
}

// index returns the position of task id, or -1.
func (d *document) index(id string) int {
	return slices.IndexFunc(d.Tasks, func(t task.Task) bool { return t.ID == id })
}

// newID returns an id not used in d and advances the sequence.
func (d *document) newID() string {
	for {
		d.Seq++
		id := fmt.Sprintf("task-%06d", d.Seq)
		if d.index(id) < 0 {
			return id
		}
	}
}

// expire fails assigned tasks whose deadline (Assigned + timeout) is at or
// before now, and returns copies of them in submission order.
func (d *document) expire(now time.Time, timeout time.Duration) []task.Task {
	var expired []task.Task
	for i := range d.Tasks {
		t := &d.Tasks[i]
		if t.Status != task.Assigned || now.Sub(t.Assigned) < timeout {
			continue
		}
		t.Status = task.Failed
		t.Ended = t.Assigned.Add(timeout)
		t.Result = "no result after " + timeout.String()
		expired = append(expired, *t)
	}
	return expired
}

// endedOldestFirst returns the positions of ended tasks, oldest Ended
// first (submission order among equals).
func (d *document) endedOldestFirst() []int {
	var idx []int
	for i, t := range d.Tasks {
		if t.Status.Ended() {
			idx = append(idx, i)
		}
	}
	slices.SortStableFunc(idx, func(a, b int) int { return d.Tasks[a].Ended.Compare(d.Tasks[b].Ended) })
	return idx
}

// drop removes the tasks at the given positions, keeping the order of the
// rest.
func (d *document) drop(positions []int) {
	gone := make(map[int]bool, len(positions))
	for _, i := range positions {
		gone[i] = true
	}
	kept := d.Tasks[:0:0]
	for i, t := range d.Tasks {
		if !gone[i] {
			kept = append(kept, t)
		}
	}
	d.Tasks = kept
}

// trim keeps at most max ended tasks, dropping the oldest ended first.
func (d *document) trim(max int) {
	idx := d.endedOldestFirst()
	if len(idx) > max {
		d.drop(idx[:len(idx)-max])
	}
}

// shrink drops the oldest ended tasks until about excess bytes are freed.
// It reports false when there is no ended task left to drop.
func (d *document) shrink(excess int) bool {
	idx := d.endedOldestFirst()
	if len(idx) == 0 {
		return false
	}
	n, freed := 0, 0
	for n < len(idx) && freed < excess {
		freed += taskSize(d.Tasks[idx[n]])
		n++
	}
	d.drop(idx[:n])
	return true
}

// liveSize is about how many bytes the pending and assigned tasks take in
// the encoded file.
func (d *document) liveSize() int {
	n := 0
	for _, t := range d.Tasks {
		if !t.Status.Ended() {
			n += taskSize(t)
		}
	}
	return n
}

// taskSize is about how many bytes t takes in the encoded file.
func taskSize(t task.Task) int {
	b, err := json.MarshalIndent(t, "    ", "  ")
	if err != nil { // cannot happen for a task
		return 0
	}
	return len(b) + len(",\n    ")
}

// encode returns the file content for d: indented JSON and a newline.
func encode(d *document) ([]byte, error) { return format.Encode(d) }

// decode parses and validates a queue file; path names it in errors, all
// of which are [*identity.CorruptError]s.
func decode(data []byte, path string) (*document, error) { return format.Decode(data, path) }

// validateTask checks the invariants a stored task must meet.
func validateTask(t task.Task) error {
	switch {
	case strings.TrimSpace(t.ID) == "":
		return errors.New("no id")
	case !t.Status.Valid():
		return fmt.Errorf("unknown status %q", t.Status)
	case strings.TrimSpace(t.Description) == "":
		return errors.New("blank description")
	}
	if t.Agent != "" {
		if err := identity.ValidateID(t.Agent); err != nil {
			return fmt.Errorf("agent: %w", err)
		}
	}
	switch t.Status {
	case task.Pending:
		if t.AssignedTo != "" {
			return fmt.Errorf("pending but assigned to %q", t.AssignedTo)
		}
	case task.Assigned:
		if err := identity.ValidateID(t.AssignedTo); err != nil {
			return fmt.Errorf("assigned_to: %w", err)
		}
		if t.Assigned.IsZero() {
			return errors.New("assigned with no assigned time")
		}
	}
	return nil
}
