package docfile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
)

// Format describes a document type D holding a schema version and one list
// of items of type T, each with a unique id. All fields are required.
type Format[D, T any] struct {
	// Version is the schema version written; files with a newer version
	// are refused, never rewritten.
	Version int
	// List is the JSON name of the item list ("tasks"), used in the
	// reasons of refusals such as "tasks[3]: duplicate id \"t\"".
	List string
	// Fields returns pointers to d's schema version and item list.
	Fields func(d *D) (version *int, items *[]T)
	// ID returns an item's id.
	ID func(item T) string
	// Validate checks one stored item's invariants.
	Validate func(item T) error
	// Corrupt builds the error for a file that cannot be used: path names
	// the file, reason says why, err is the underlying error or nil. It
	// returns the using package's corrupt-file error type.
	Corrupt func(path, reason string, err error) error
}

// New returns an empty document of the current version with a non-nil,
// empty item list.
func (f *Format[D, T]) New() *D {
	var d D
	v, items := f.Fields(&d)
	*v, *items = f.Version, []T{}
	return &d
}

// Clone returns a copy of d with its own item list (items are copied by
// value).
func (f *Format[D, T]) Clone(d *D) *D {
	c := *d
	_, items := f.Fields(&c)
	*items = slices.Clone(*items)
	return &c
}

// Encode returns the file content for d: JSON indented by two spaces,
// without HTML escaping, and a newline; the version is set to
// [Format.Version] and a nil item list is written as []. d is unchanged.
func (f *Format[D, T]) Encode(d *D) ([]byte, error) {
	c := *d
	v, items := f.Fields(&c)
	*v = f.Version
	if *items == nil {
		*items = []T{}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(&c); err != nil { // Encode adds the newline
		return nil, err
	}
	return buf.Bytes(), nil
}

// Decode parses and validates a file's content; path names it in errors,
// every one of which is built by [Format.Corrupt]. It refuses empty
// content, invalid or truncated JSON, unknown fields, data after the
// document, a missing, negative or newer schema version, an item that
// fails Validate and a duplicate id. A null item list decodes as empty.
func (f *Format[D, T]) Decode(data []byte, path string) (*D, error) {
	corrupt := func(err error, format string, args ...any) error {
		return f.Corrupt(path, fmt.Sprintf(format, args...), err)
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, corrupt(nil, "empty file")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var d D
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
	v, items := f.Fields(&d)
	switch {
	case *v == 0:
		return nil, corrupt(nil, "no schema version")
	case *v > f.Version:
		return nil, corrupt(nil, "schema version %d is newer than this SDK reads (%d); upgrade the SDK", *v, f.Version)
	case *v < 0:
		return nil, corrupt(nil, "invalid schema version %d", *v)
	}
	if *items == nil {
		*items = []T{}
	}
	seen := make(map[string]bool, len(*items))
	for i, it := range *items {
		id := f.ID(it)
		if err := f.Validate(it); err != nil {
			return nil, corrupt(err, "%s[%d] (id %q): %v", f.List, i, id, err)
		}
		if seen[id] {
			return nil, corrupt(nil, "%s[%d]: duplicate id %q", f.List, i, id)
		}
		seen[id] = true
	}
	return &d, nil
}
