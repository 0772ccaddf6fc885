package prompt

import (
	"cmp"
	"errors"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v5"
)

// schemaError turns a validator error into a *ParseError of kind ErrSchema
// that names the first bad field in document order. The validator reports
// a tree of causes, in map (random) order; the leaves are the specific
// errors. They are sorted by instance location using the schema's property
// order (array indices numerically), so the same input always gives the
// same error.
func schemaError(err error, order map[string]int) *ParseError {
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return &ParseError{Kind: ErrSchema, Detail: err.Error(), Offset: -1}
	}
	var leaves []*jsonschema.ValidationError
	collectLeaves(ve, &leaves, 0)
	if len(leaves) == 0 {
		return &ParseError{Kind: ErrSchema, Pointer: ve.InstanceLocation, Detail: ve.Message, Offset: -1}
	}
	type located struct {
		ptr    string
		detail string
	}
	errs := make([]located, len(leaves))
	for i, l := range leaves {
		errs[i].ptr, errs[i].detail = describeLeaf(l)
	}
	best := 0
	for i := 1; i < len(errs); i++ {
		if c := comparePointers(errs[i].ptr, errs[best].ptr, order); c < 0 || (c == 0 && errs[i].detail < errs[best].detail) {
			best = i
		}
	}
	pe := &ParseError{Kind: ErrSchema, Pointer: errs[best].ptr, Detail: errs[best].detail, Offset: -1}
	switch n := len(errs) - 1; n {
	case 0:
	case 1:
		pe.Detail += " (and 1 more error)"
	default:
		pe.Detail += " (and " + strconv.Itoa(n) + " more errors)"
	}
	return pe
}

// maxCauseDepth bounds the walk of the cause tree; the schema is shallow.
const maxCauseDepth = 32

func collectLeaves(ve *jsonschema.ValidationError, out *[]*jsonschema.ValidationError, depth int) {
	if ve == nil {
		return
	}
	if len(ve.Causes) == 0 || depth >= maxCauseDepth {
		*out = append(*out, ve)
		return
	}
	for _, c := range ve.Causes {
		collectLeaves(c, out, depth+1)
	}
}

// describeLeaf returns the pointer and a short message for one leaf. A
// missing property is reported at the pointer where it should be when it is
// the only one missing: "/new_opinions/0/domain", `missing property
// "domain"`.
func describeLeaf(l *jsonschema.ValidationError) (ptr, detail string) {
	const prefix = "missing properties: "
	if rest, ok := strings.CutPrefix(l.Message, prefix); ok {
		names := strings.Split(rest, ", ")
		quoted := make([]string, len(names))
		for i, n := range names {
			names[i] = unquoteSingle(n)
			quoted[i] = strconv.Quote(names[i])
		}
		if len(names) == 1 {
			return l.InstanceLocation + "/" + escapePointer(names[0]), "missing property " + quoted[0]
		}
		return l.InstanceLocation, "missing properties " + strings.Join(quoted, ", ")
	}
	return l.InstanceLocation, l.Message
}

// unquoteSingle undoes the validator's single quoting of property names
// ('domain' -> domain). Our property names need no escapes.
func unquoteSingle(s string) string {
	if len(s) >= 2 && s[0] == '\'' && s[len(s)-1] == '\'' {
		return s[1 : len(s)-1]
	}
	return s
}

// escapePointer escapes one JSON Pointer reference token (RFC 6901).
func escapePointer(s string) string {
	s = strings.ReplaceAll(s, "~", "~0")
	return strings.ReplaceAll(s, "/", "~1")
}

// comparePointers orders JSON Pointers in document order: token by token,
// array indices numerically, property names by their position in the
// schema (unknown names after known ones, alphabetically), a parent before
// its children.
func comparePointers(a, b string, order map[string]int) int {
	at := strings.Split(strings.TrimPrefix(a, "/"), "/")
	bt := strings.Split(strings.TrimPrefix(b, "/"), "/")
	if a == "" {
		at = nil
	}
	if b == "" {
		bt = nil
	}
	for i := 0; i < len(at) && i < len(bt); i++ {
		if c := compareTokens(at[i], bt[i], order); c != 0 {
			return c
		}
	}
	return cmp.Compare(len(at), len(bt))
}

func compareTokens(a, b string, order map[string]int) int {
	if a == b {
		return 0
	}
	ai, aerr := strconv.Atoi(a)
	bi, berr := strconv.Atoi(b)
	if aerr == nil && berr == nil {
		return cmp.Compare(ai, bi)
	}
	ao, aok := order[a]
	bo, bok := order[b]
	switch {
	case aok && bok:
		return cmp.Compare(ao, bo)
	case aok:
		return -1
	case bok:
		return 1
	}
	return strings.Compare(a, b)
}
