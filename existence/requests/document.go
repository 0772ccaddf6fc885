package requests

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/existence-loop/sdk/identity"
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

func newDocument() *document { return &document{Version: schemaVersion, Requests: []Request{}} }

func (d *document) clone() *document {
	c := *d
	c.Requests = slices.Clone(d.Requests)
	return &c
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
func encode(d *document) ([]byte, error) {
	c := *d
	c.Version = schemaVersion
	if c.Requests == nil {
		c.Requests = []Request{}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(&c); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// decode parses and validates a requests file; every error is a
// [*CorruptError] naming path.
func decode(data []byte, path string) (*document, error) {
	corrupt := func(err error, format string, args ...any) error {
		return &CorruptError{Path: path, Reason: fmt.Sprintf(format, args...), Err: err}
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, corrupt(nil, "empty file")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var d document
	if err := dec.Decode(&d); err != nil {
		var syn *json.SyntaxError
		switch {
		case errors.As(err, &syn):
			return nil, corrupt(err, "%v (at byte %d)", err, syn.Offset)
		case errors.Is(err, io.ErrUnexpectedEOF):
			return nil, corrupt(err, "truncated JSON")
		}
		return nil, corrupt(err, "%v", strings.TrimPrefix(err.Error(), "json: "))
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, corrupt(nil, "data after the JSON document (at byte %d)", dec.InputOffset())
	}
	switch {
	case d.Version == 0:
		return nil, corrupt(nil, "no schema version")
	case d.Version > schemaVersion:
		return nil, corrupt(nil, "schema version %d is newer than this SDK reads (%d); upgrade the SDK", d.Version, schemaVersion)
	case d.Version < 0:
		return nil, corrupt(nil, "invalid schema version %d", d.Version)
	}
	if d.Requests == nil {
		d.Requests = []Request{}
	}
	seen := make(map[string]bool, len(d.Requests))
	for i, r := range d.Requests {
		if err := validate(r); err != nil {
			return nil, corrupt(err, "requests[%d] (id %q): %v", i, r.ID, err)
		}
		if seen[r.ID] {
			return nil, corrupt(nil, "requests[%d]: duplicate id %q", i, r.ID)
		}
		seen[r.ID] = true
	}
	return &d, nil
}

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
