package toolloop

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"regexp"
	"slices"
	"strings"

	"github.com/invopop/jsonschema"
	validator "github.com/santhosh-tekuri/jsonschema/v5"

	"github.com/existence-loop/sdk/internal/strictjson"
)

// Tool is one capability the model may call. It is a small interface so that
// applications can offer their own tools; [NewTool] builds one from a Go
// function and its argument struct.
//
// Name must match ^[A-Za-z0-9_-]{1,64}$ (the rule the OpenAI and Ollama
// tool-calling APIs share). Schema is the JSON Schema (draft 2020-12) of the
// argument object, sent to the model as [llm.ToolDef.Parameters]; nil means
// "an object with any properties". The [Executor] validates the model's
// arguments against it before Call, so Call receives a JSON object that
// conforms.
//
// Call runs the tool and returns its result as text for the model. It must
// honour ctx: the executor cancels ctx when the per-tool timeout expires or
// the goal is interrupted, and then stops waiting for Call. A returned error
// is shown to the model as "Error: " + err.Error() and counts as a tool
// failure.
type Tool interface {
	Name() string
	Description() string
	Schema() json.RawMessage
	Call(ctx context.Context, args json.RawMessage) (string, error)
}

// ErrInvalidArguments matches (with [errors.Is]) every [*ArgumentError].
var ErrInvalidArguments = errors.New("invalid arguments")

// ArgumentError reports tool arguments that are not a JSON object or do not
// conform to the tool's schema. Its text is written for the model, for
// example "invalid arguments: /path: expected string, but got number".
type ArgumentError struct {
	// Problems lists each violation as "{JSON pointer}: {message}", the
	// pointer being "/" for the argument object itself, sorted.
	Problems []string
}

// Error reads "invalid arguments: " and the problems joined by "; ", the
// text the model reads as the tool result.
func (e *ArgumentError) Error() string {
	return "invalid arguments: " + strings.Join(e.Problems, "; ")
}

// Is reports whether target is [ErrInvalidArguments].
func (e *ArgumentError) Is(target error) bool { return target == ErrInvalidArguments }

// validName is the tool-name rule of the OpenAI and Ollama tool-calling APIs.
var validName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// emptyObjectSchema is the schema used for a Tool whose Schema is nil.
var emptyObjectSchema = json.RawMessage(`{"type":"object","properties":{}}`)

// NewTool builds a [Tool] from a function of a Go argument struct A.
//
// The argument schema is generated from A with github.com/invopop/jsonschema:
// field names come from `json` tags, a field without `omitempty` is
// required, descriptions come from `jsonschema_description` (or
// `jsonschema:"description=..."`) tags, and unknown properties are refused
// (additionalProperties false). The schema is flat: nested types are inlined,
// with no $ref or $defs.
//
// Call accepts the arguments as a JSON object, or as a JSON string that
// contains the object (some models send that); empty arguments and null mean
// {}. It validates them against the schema with
// github.com/santhosh-tekuri/jsonschema/v5, decodes them into A with
// encoding/json and calls fn. Invalid arguments give an [*ArgumentError]
// without calling fn.
//
// A must be a struct type. NewTool never panics: a tool whose A is not a
// struct, or whose schema cannot be generated, returns the problem from
// every Call, and [New] refuses it.
func NewTool[A any](name, description string, fn func(ctx context.Context, args A) (string, error)) Tool {
	t := &funcTool[A]{name: name, description: description, fn: fn}
	t.schema, t.compiled, t.err = reflectSchema[A](name)
	if t.err == nil && fn == nil {
		t.err = fmt.Errorf("toolloop: tool %q: nil function", name)
	}
	return t
}

type funcTool[A any] struct {
	name, description string
	schema            json.RawMessage
	compiled          *validator.Schema
	err               error
	fn                func(context.Context, A) (string, error)
}

func (t *funcTool[A]) Name() string            { return t.name }
func (t *funcTool[A]) Description() string     { return t.description }
func (t *funcTool[A]) Schema() json.RawMessage { return slices.Clone(t.schema) }
func (t *funcTool[A]) toolErr() error          { return t.err }

func (t *funcTool[A]) Call(ctx context.Context, args json.RawMessage) (string, error) {
	if t.err != nil {
		return "", t.err
	}
	obj, err := checkArgs(t.compiled, args)
	if err != nil {
		return "", err
	}
	var a A
	if err := json.Unmarshal(obj, &a); err != nil {
		// The schema accepted it, but Go could not hold it (an integer
		// out of range, for instance).
		return "", &ArgumentError{Problems: []string{"/: " + err.Error()}}
	}
	return t.fn(ctx, a)
}

// brokenTool is implemented by tools that could not be built; New refuses
// them.
type brokenTool interface{ toolErr() error }

// Writing returns t marked as a tool that writes: its calls change what
// the goal is about (files written, appended or deleted), so that
// [RequireEvidence] does not accept a goal whose calls of such tools all
// failed. The workspace's write_file, append_file and delete_file are
// marked. Everything else of t is unchanged.
func Writing(t Tool) Tool {
	if t == nil {
		return nil
	}
	return writingTool{t}
}

// Writer is implemented by the tools [Writing] returns; Writes reports
// true.
type Writer interface{ Writes() bool }

type writingTool struct{ Tool }

func (writingTool) Writes() bool { return true }

func (w writingTool) toolErr() error {
	if b, ok := w.Tool.(brokenTool); ok {
		return b.toolErr()
	}
	return nil
}

// writes reports whether t is marked as a tool that writes.
func writes(t Tool) bool {
	w, ok := t.(Writer)
	return ok && w.Writes()
}

// reflectSchema generates the flat object schema of A and compiles it.
func reflectSchema[A any](name string) (json.RawMessage, *validator.Schema, error) {
	typ := reflect.TypeFor[A]()
	if typ.Kind() != reflect.Struct {
		return nil, nil, fmt.Errorf("toolloop: tool %q: argument type %s is not a struct", name, typ)
	}
	r := jsonschema.Reflector{DoNotReference: true, ExpandedStruct: true, Anonymous: true}
	s := r.ReflectFromType(typ)
	s.Version = "" // providers do not want "$schema" in tool parameters
	raw, err := json.Marshal(s)
	if err != nil {
		return nil, nil, fmt.Errorf("toolloop: tool %q: schema: %w", name, err)
	}
	compiled, err := compileSchema(name, raw)
	if err != nil {
		return nil, nil, err
	}
	return raw, compiled, nil
}

// compileSchema compiles a tool's argument schema (draft 2020-12 unless the
// schema says otherwise). A nil schema accepts any object.
func compileSchema(name string, raw json.RawMessage) (*validator.Schema, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		raw = emptyObjectSchema
	}
	c := validator.NewCompiler()
	c.Draft = validator.Draft2020
	url := "mem://toolloop/" + name + ".json"
	if err := c.AddResource(url, bytes.NewReader(raw)); err != nil {
		return nil, fmt.Errorf("toolloop: tool %q: schema: %w", name, err)
	}
	s, err := c.Compile(url)
	if err != nil {
		return nil, fmt.Errorf("toolloop: tool %q: schema: %w", name, err)
	}
	return s, nil
}

// checkArgs normalises the model's arguments to one JSON object (unwrapping a
// JSON string that contains it, and reading empty or null as {}), refuses
// an object that names a key twice (internal/strictjson) and validates it
// against s. It returns the object's bytes.
func checkArgs(s *validator.Schema, raw json.RawMessage) (json.RawMessage, error) {
	obj := bytes.TrimSpace(raw)
	if len(obj) > 0 && obj[0] == '"' {
		var inner string
		if err := json.Unmarshal(obj, &inner); err != nil {
			return nil, &ArgumentError{Problems: []string{"/: not valid JSON: " + err.Error()}}
		}
		obj = bytes.TrimSpace([]byte(inner))
	}
	if len(obj) == 0 || string(obj) == "null" {
		obj = []byte("{}")
	}
	if err := strictjson.Check(obj); err != nil {
		// {"path": "a", "path": "b"}: the tool and the model could read
		// different values; neither is used.
		return nil, &ArgumentError{Problems: []string{"/: " + err.Error() + "; send each argument once"}}
	}
	dec := json.NewDecoder(bytes.NewReader(obj))
	dec.UseNumber() // keep number precision for the validator
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, &ArgumentError{Problems: []string{"/: not valid JSON: " + err.Error()}}
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, &ArgumentError{Problems: []string{"/: not valid JSON: data after the object"}}
	}
	if _, ok := v.(map[string]any); !ok {
		return nil, &ArgumentError{Problems: []string{"/: expected a JSON object of arguments, got " + jsonKind(v)}}
	}
	if s != nil {
		if err := s.Validate(v); err != nil {
			return nil, validationError(err)
		}
	}
	return json.RawMessage(obj), nil
}

func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case json.Number:
		return "a number"
	case string:
		return "a string"
	case []any:
		return "an array"
	}
	return "an object"
}

// validationError turns the validator's error tree into an [*ArgumentError]
// listing its leaves.
func validationError(err error) error {
	var ve *validator.ValidationError
	if !errors.As(err, &ve) {
		return &ArgumentError{Problems: []string{"/: " + err.Error()}}
	}
	var problems []string
	var walk func(e *validator.ValidationError)
	walk = func(e *validator.ValidationError) {
		if len(e.Causes) == 0 {
			loc := e.InstanceLocation
			if loc == "" {
				loc = "/"
			}
			problems = append(problems, loc+": "+e.Message)
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	// The validator visits properties in map order; sort for stable
	// messages.
	slices.Sort(problems)
	return &ArgumentError{Problems: slices.Compact(problems)}
}
