package requests

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/internal/docfile"
)

// schemaVersion is the version of the file format written by this package;
// files from a newer version are refused, never rewritten.
const schemaVersion = 1

// document is the requests file's content.
type document struct {
	Version int `json:"version"`
	// Seq is the number of the last id handed out; it only grows.
	Seq uint64 `json:"seq"`
	// Requests are in submission order.
	Requests []Request `json:"requests"`
}

// format is the requests file's format (see [docfile.Format]).
var format = &docfile.Format[document, Request]{
	Version:  schemaVersion,
	List:     "requests",
	Fields:   func(d *document) (*int, *[]Request) { return &d.Version, &d.Requests },
	ID:       func(r Request) string { return r.ID },
	Validate: validate,
	Corrupt: func(path, reason string, err error) error {
		return &identity.CorruptError{Kind: "requests file", Path: path, Reason: reason, Err: err}
	},
}

func (d *document) index(id string) int {
	return slices.IndexFunc(d.Requests, func(r Request) bool { return r.ID == id })
}

// trim keeps at most max ended requests, dropping the oldest ended first.
func (d *document) trim(max int) {
	var ended []int
	for i, r := range d.Requests {
		if r.Status.Ended() {
			ended = append(ended, i)
		}
	}
	if len(ended) <= max {
		return
	}
	slices.SortStableFunc(ended, func(a, b int) int { return d.Requests[a].Ended.Compare(d.Requests[b].Ended) })
	gone := map[int]bool{}
	for _, i := range ended[:len(ended)-max] {
		gone[i] = true
	}
	kept := d.Requests[:0:0]
	for i, r := range d.Requests {
		if !gone[i] {
			kept = append(kept, r)
		}
	}
	d.Requests = kept
}

// encode returns the file content: indented JSON and a newline.
func encode(d *document) ([]byte, error) { return format.Encode(d) }

// decode parses and validates a requests file; every error is a
// [*identity.CorruptError] naming path.
func decode(data []byte, path string) (*document, error) { return format.Decode(data, path) }

// validate checks the invariants a stored request must meet.
func validate(r Request) error {
	switch {
	case strings.TrimSpace(r.ID) == "":
		return errors.New("no id")
	case !r.Kind.Valid():
		return fmt.Errorf("unknown kind %q", r.Kind)
	case !r.Status.valid():
		return fmt.Errorf("unknown status %q", r.Status)
	case strings.TrimSpace(r.Text) == "":
		return errors.New("blank text")
	case r.Created.IsZero():
		return errors.New("no created time")
	case r.Status.Ended() && r.Ended.IsZero():
		return errors.New("answered with no ended time")
	}
	if err := identity.ValidateID(r.Agent); err != nil {
		return fmt.Errorf("agent: %w", err)
	}
	return nil
}
