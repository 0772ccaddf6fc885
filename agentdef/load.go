package agentdef

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"

	"github.com/existence-loop/sdk/existence"
	"github.com/existence-loop/sdk/existence/budget"
	"github.com/existence-loop/sdk/existence/workflow"
	"github.com/existence-loop/sdk/identity"
)

// File names inside an agent's folder.
const (
	// DefinitionFile is the agent's definition (agent_ecology's name).
	DefinitionFile = "agent.yaml"
	// SystemPromptFile, optional, is the agent's role text
	// (agent_ecology's system_prompt.md); it takes the place of the
	// role key.
	SystemPromptFile = "system_prompt.md"
	// BootstrapFile, optional, starts the agent in commissioning (GSV's
	// BOOTSTRAP.md): see docs/agents.md.
	BootstrapFile = "BOOTSTRAP.md"
)

// MaxFileBytes is the largest file [Load] reads: 1 MiB. A definition is a
// few hundred bytes and a prompt a few kilobytes; a larger file is
// refused with [ErrTooLarge] before it is parsed.
const MaxFileBytes = 1 << 20

// DefaultWorkingMemoryBytes is the working memory's default cap, in bytes
// of compact JSON: agent_ecology's max_size_bytes default
// ([existence.DefaultWorkingMemoryBytes]).
const DefaultWorkingMemoryBytes = existence.DefaultWorkingMemoryBytes

// Set is a loaded definitions directory.
type Set struct {
	// Dir is the directory as given to [Load].
	Dir string
	// Agents are the definitions in the order of their folders' names,
	// disabled ones (enabled: false) included.
	Agents []*Definition
	// Ignored are the top-level keys the SDK does not use (such as
	// agent_ecology's starting_scrip), in file order.
	Ignored []Ignored
}

// Enabled returns the definitions whose enabled is not false.
func (s *Set) Enabled() []*Definition {
	var out []*Definition
	for _, d := range s.Agents {
		if d.Enabled {
			out = append(out, d)
		}
	}
	return out
}

// Definition is one agent's definition: its folder's agent.yaml,
// system_prompt.md and BOOTSTRAP.md.
type Definition struct {
	// Folder is the agent's folder name under the definitions directory.
	Folder string
	// File is the path of its agent.yaml, as errors name it.
	File string

	// ID is the agent id ("id", required; see identity.ValidateID).
	ID string
	// Name is the display name ("name"; default the id).
	Name string
	// Role is the role text: system_prompt.md when the folder has one,
	// else "role"; it follows the default situation in the prompt.
	Role string
	// Enabled is "enabled" (default true): a disabled agent is loaded
	// but not run.
	Enabled bool
	// Model is "llm_model": the model's name on the model server ("" for
	// the command's -model).
	Model string
	// Server is "model_server": where the model is served (nil: the
	// command's -provider and -llm-url).
	Server *Server
	// Temperature is "temperature" (nil: not sent).
	Temperature *float64
	// MaxTokens is "max_tokens": the existence reply's limit in tokens (0:
	// the default).
	MaxTokens int
	// Heartbeat is "heartbeat", a Go duration such as "6s" (0: the
	// runner's).
	Heartbeat time.Duration
	// Budget is "budget", TOKENS/DURATION[+RESERVE] as
	// budget.Parse reads it (zero: none).
	Budget budget.Budget
	// Tools is "tools": the names of the tools the agent's goals may use;
	// nil (absent) means all the command offers, empty means none.
	Tools []string
	// Traits and Domains seed a new identity ("traits", "domains").
	Traits, Domains []string
	// RAG is "rag" (agent_ecology): long-term memory recalled into the
	// prompt.
	RAG RAG
	// WorkingMemory is "working_memory".
	WorkingMemory WorkingMemory
	// Workflow is "workflow" (nil: the existence prompt, one model call a
	// cycle).
	Workflow *workflow.Workflow
	// Bootstrap is BOOTSTRAP.md's text, "" when the folder has none; its
	// path is BootstrapPath (relative to the definitions directory).
	Bootstrap     string
	BootstrapPath string

	lines map[string]int // key path → line, for later errors (Line)
}

// Line returns the line of key (a dotted path such as "tools" or
// "workflow.steps") in File, 0 when it is not there.
func (d *Definition) Line(key string) int { return d.lines[key] }

// Server is where an agent's model is served ("model_server").
type Server struct {
	// Provider is "ollama" or "openai" (an OpenAI-compatible server).
	Provider string `yaml:"provider"`
	// URL is the server's URL (Ollama's, or a base URL ending in /v1).
	URL string `yaml:"url"`
}

// RAG is agent_ecology's per-agent rag block: with enabled, the agent's
// long-term memories most relevant to QueryTemplate (a fixed query) are
// recalled into its prompt each cycle, Limit of them (default 5). It
// needs long-term memory (the command's -memory).
type RAG struct {
	Enabled       bool   `yaml:"enabled"`
	Limit         int    `yaml:"limit"`
	QueryTemplate string `yaml:"query_template"`
}

// WorkingMemory is the working_memory block (agent_ecology Plan #59):
// off by default. With Enabled, the agent's reply may carry a
// working_memory object of at most MaxBytes bytes of compact JSON
// (default 2,000); it is kept in the state and shown in its own prompt
// section.
type WorkingMemory struct {
	Enabled  bool
	MaxBytes int
}

// The YAML form of a definition. Its yaml tags are the known top-level
// keys; every other top-level key is reported as [Ignored].
type fileDef struct {
	ID            string        `yaml:"id"`
	Name          string        `yaml:"name"`
	Role          string        `yaml:"role"`
	Enabled       *bool         `yaml:"enabled"`
	LLMModel      string        `yaml:"llm_model"`
	ModelServer   *Server       `yaml:"model_server"`
	Temperature   *float64      `yaml:"temperature"`
	MaxTokens     int           `yaml:"max_tokens"`
	Heartbeat     string        `yaml:"heartbeat"`
	Budget        string        `yaml:"budget"`
	Tools         *[]string     `yaml:"tools"`
	Traits        []string      `yaml:"traits"`
	Domains       []string      `yaml:"domains"`
	RAG           *RAG          `yaml:"rag"`
	WorkingMemory *fileWM       `yaml:"working_memory"`
	Workflow      *fileWorkflow `yaml:"workflow"`
}

// fileWM is working_memory: agent_ecology's config.yaml keys. Those the
// SDK does not use (auto_inject is always on; include_in_rag,
// structured_format, warn_on_missing) are accepted and reported as
// ignored.
type fileWM struct {
	Enabled          bool  `yaml:"enabled"`
	MaxSizeBytes     int   `yaml:"max_size_bytes"`
	AutoInject       *bool `yaml:"auto_inject"`
	IncludeInRAG     *bool `yaml:"include_in_rag"`
	StructuredFormat *bool `yaml:"structured_format"`
	WarnOnMissing    *bool `yaml:"warn_on_missing"`
}

type fileWorkflow struct {
	Steps         []fileStep `yaml:"steps"`
	ErrorHandling *struct {
		OnStepFailure string `yaml:"on_step_failure"`
	} `yaml:"error_handling"`
}

type fileStep struct {
	Name       string    `yaml:"name"`
	Type       string    `yaml:"type"`
	Prompt     string    `yaml:"prompt"`
	PromptFile string    `yaml:"prompt_file"`
	Schema     any       `yaml:"schema"`
	Action     string    `yaml:"action"`
	When       *fileWhen `yaml:"when"`
}

type fileWhen struct {
	Every            int     `yaml:"every"`
	Stuck            bool    `yaml:"stuck"`
	SuccessRateBelow float64 `yaml:"success_rate_below"`
}

// knownKeys are fileDef's yaml keys.
var knownKeys = func() map[string]bool {
	m := map[string]bool{}
	t := reflect.TypeFor[fileDef]()
	for i := range t.NumField() {
		m[t.Field(i).Tag.Get("yaml")] = true
	}
	return m
}()

// Options configure [Load].
type Options struct {
	// Actions are the names of the code-step actions the caller will
	// register (workflow.Workflow.Actions) beside the built-in ones; a
	// code step naming another action is an error.
	Actions []string
}

// Load reads the definitions directory dir: one folder per agent, each
// with an agent.yaml and optionally a system_prompt.md and a
// BOOTSTRAP.md. Files and folders whose names start with "." are skipped,
// as are plain files at the top (a README).
//
// Parsing is strict (github.com/goccy/go-yaml): a value of the wrong
// type, a key named twice, an unknown key inside a block the SDK knows, an
// unknown step type, an unregistered code action, an invalid id, name,
// duration or budget, two agents with one id, a missing prompt_file, a
// file over [MaxFileBytes] and a path leading out of dir (a symbolic
// link; every file is opened through an os.Root on dir) are each an
// *[Error] naming the file and, when it has one, the line. Load returns
// every problem found, joined (errors.Join), and no Set: nothing should
// start. Unknown top-level keys are not errors: they are listed in
// Set.Ignored.
func Load(dir string, opts Options) (*Set, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("agentdef: %w", err)
	}
	defer root.Close()
	entries, err := fs.ReadDir(root.FS(), ".")
	if err != nil {
		return nil, fmt.Errorf("agentdef: %w", err)
	}
	set := &Set{Dir: dir}
	var errs []error
	ids := map[string]string{} // id → file
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, ".") {
			continue
		}
		fi, err := root.Stat(name) // follows a link, within the root only
		if err != nil {
			errs = append(errs, errorf(filepath.Join(dir, name), 0, 0, ErrFile, "%v", unwrapPath(err)))
			continue
		}
		if !fi.IsDir() {
			continue
		}
		l := &loader{root: root, dir: dir, folder: name, opts: opts}
		d := l.load()
		errs = append(errs, l.errs...)
		set.Ignored = append(set.Ignored, l.ignored...)
		if d == nil {
			continue
		}
		if prev, dup := ids[d.ID]; dup {
			errs = append(errs, errorf(d.File, d.Line("id"), 0, ErrInvalid, "id %q is also the id of %s", d.ID, prev))
			continue
		}
		ids[d.ID] = d.File
		set.Agents = append(set.Agents, d)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return set, nil
}

// unwrapPath drops the *fs.PathError's op and path, which name the
// root-relative path the error's File already names.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// loader loads one agent's folder.
type loader struct {
	root    *os.Root
	dir     string
	folder  string
	opts    Options
	file    string // the agent.yaml's path as errors name it
	ast     *ast.File
	errs    []error
	ignored []Ignored
}

func (l *loader) fail(line, col int, kind error, format string, args ...any) {
	l.errs = append(l.errs, errorf(l.file, line, col, kind, format, args...))
}

// read reads name (relative to the agent's folder) through the root, at
// most MaxFileBytes. missing reports whether it does not exist (and is
// not an error then); other failures are reported with line.
func (l *loader) read(name string, line int) (data []byte, missing bool) {
	rel := path.Join(l.folder, name)
	shown := filepath.Join(l.dir, filepath.FromSlash(rel))
	fail := func(kind error, format string, args ...any) {
		if name == DefinitionFile || line == 0 {
			l.errs = append(l.errs, errorf(shown, 0, 0, kind, format, args...))
			return
		}
		l.fail(line, 0, kind, "%s: "+format, append([]any{name}, args...)...)
	}
	f, err := l.root.Open(rel)
	if errors.Is(err, fs.ErrNotExist) {
		// A dangling link or a missing file; a link out of the root is
		// refused with another error, below.
		if _, lerr := l.root.Lstat(rel); lerr != nil {
			return nil, true
		}
	}
	if err != nil {
		fail(ErrFile, "%v", unwrapPath(err))
		return nil, false
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		fail(ErrFile, "%v", err)
		return nil, false
	}
	if fi.IsDir() {
		fail(ErrFile, "is a directory")
		return nil, false
	}
	if fi.Size() > MaxFileBytes {
		fail(ErrTooLarge, "%d bytes, at most %d", fi.Size(), MaxFileBytes)
		return nil, false
	}
	data, err = io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		fail(ErrFile, "%v", err)
		return nil, false
	}
	if len(data) > MaxFileBytes {
		fail(ErrTooLarge, "more than %d bytes", MaxFileBytes)
		return nil, false
	}
	return data, false
}

// load loads the folder's definition; nil when it has errors.
func (l *loader) load() *Definition {
	l.file = filepath.Join(l.dir, l.folder, DefinitionFile)
	data, missing := l.read(DefinitionFile, 0)
	if missing {
		l.errs = append(l.errs, errorf(l.file, 0, 0, ErrFile, "missing: an agent's folder holds an %s", DefinitionFile))
		return nil
	}
	if data == nil {
		return nil
	}
	fd, ok := l.parse(data)
	if !ok {
		return nil
	}
	d := l.convert(fd)
	if len(l.errs) > 0 {
		return nil
	}
	return d
}

// parse parses the YAML, reports and drops the unknown top-level keys,
// and decodes the rest strictly.
func (l *loader) parse(data []byte) (*fileDef, bool) {
	f, err := parser.ParseBytes(data, 0)
	if err != nil {
		l.yamlError(err, ErrSyntax)
		return nil, false
	}
	l.ast = f
	switch {
	case len(f.Docs) == 0 || (len(f.Docs) == 1 && f.Docs[0].Body == nil):
		l.fail(0, 0, ErrInvalid, "empty: an agent.yaml holds at least an id")
		return nil, false
	case len(f.Docs) > 1:
		l.fail(0, 0, ErrSyntax, "want one YAML document, a block of keys; found %d documents", len(f.Docs))
		return nil, false
	}
	body := f.Docs[0].Body
	var m *ast.MappingNode
	switch n := body.(type) {
	case *ast.MappingNode:
		m = n
	case *ast.MappingValueNode:
		m = &ast.MappingNode{BaseNode: &ast.BaseNode{}, Start: n.GetToken(), Values: []*ast.MappingValueNode{n}}
	default:
		tk := body.GetToken()
		l.fail(tk.Position.Line, tk.Position.Column, ErrType, "want a block of keys, found %s", body.Type())
		return nil, false
	}
	kept := m.Values[:0:0]
	for _, mv := range m.Values {
		key := mv.Key.String()
		if knownKeys[key] {
			kept = append(kept, mv)
			continue
		}
		l.ignored = append(l.ignored, Ignored{File: l.file, Line: mv.Key.GetToken().Position.Line, Key: key})
	}
	// Duplicate ignored keys are still duplicates.
	seen := map[string]int{}
	for _, mv := range m.Values {
		key := mv.Key.String()
		if line, ok := seen[key]; ok {
			tk := mv.Key.GetToken()
			l.fail(tk.Position.Line, tk.Position.Column, ErrDuplicateKey, "duplicate key %q (first at line %d)", key, line)
			return nil, false
		}
		seen[key] = mv.Key.GetToken().Position.Line
	}
	m.Values = kept
	var fd fileDef
	if err := yaml.NodeToValue(m, &fd, yaml.Strict()); err != nil {
		l.yamlError(err, ErrType)
		return nil, false
	}
	return &fd, true
}

// yamlError reports a go-yaml error at its token, classified.
func (l *loader) yamlError(err error, kind error) {
	var (
		line, col int
		msg       = err.Error()
	)
	var ye yaml.Error
	if errors.As(err, &ye) {
		msg = ye.GetMessage()
		if tk := ye.GetToken(); tk != nil {
			line, col = tk.Position.Line, tk.Position.Column
		}
	}
	var te *yaml.TypeError
	switch {
	case errors.As(err, new(*yaml.DuplicateKeyError)), strings.Contains(msg, "already defined"):
		kind = ErrDuplicateKey
	case errors.As(err, &te):
		kind = ErrType
		msg = fmt.Sprintf("wrong type: want %s, found %s", typeName(te.DstType), typeName(te.SrcType))
		if te.Token != nil {
			msg += fmt.Sprintf(" %q", te.Token.Value)
		}
	case errors.As(err, new(*yaml.UnknownFieldError)):
		kind = ErrUnknownKey
	case errors.As(err, new(*yaml.SyntaxError)):
		kind = ErrSyntax
	case errors.As(err, new(*yaml.OverflowError)), errors.As(err, new(*yaml.UnexpectedNodeTypeError)):
		kind = ErrType
	}
	l.fail(line, col, kind, "%s", msg)
}

// typeName names a Go type as a definition's author knows it.
func typeName(t reflect.Type) string {
	if t == nil {
		return "nothing"
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int64, reflect.Uint64:
		return "a whole number"
	case reflect.Float64:
		return "a number"
	case reflect.Bool:
		return "true or false"
	case reflect.String:
		return "a string"
	case reflect.Slice:
		return "a list"
	case reflect.Map, reflect.Struct:
		return "a block of keys"
	}
	return t.String()
}

// lineOf returns the line of the value at the YAML path p ("$.rag.limit"),
// 0 when there is none.
func (l *loader) lineOf(p string) int {
	yp, err := yaml.PathString(p)
	if err != nil {
		return 0
	}
	n, err := yp.FilterFile(l.ast)
	if err != nil || n == nil || n.GetToken() == nil {
		return 0
	}
	return n.GetToken().Position.Line
}

// convert checks the decoded definition and builds the Definition.
func (l *loader) convert(fd *fileDef) *Definition {
	d := &Definition{Folder: l.folder, File: l.file, lines: map[string]int{}}
	for k := range knownKeys {
		if line := l.lineOf("$." + k); line > 0 {
			d.lines[k] = line
		}
	}
	bad := func(key, format string, args ...any) {
		l.fail(l.lineOf("$."+key), 0, ErrInvalid, "%s: "+format, append([]any{key}, args...)...)
	}

	d.ID = fd.ID
	switch err := identity.ValidateID(fd.ID); {
	case fd.ID == "":
		l.fail(0, 0, ErrInvalid, "id: missing; every agent needs an id")
	case err != nil:
		bad("id", "%v", err)
	}
	d.Name = cmp.Or(fd.Name, fd.ID)
	if err := identity.ValidateName(d.Name); err != nil && d.ID != "" {
		bad(map[bool]string{true: "name", false: "id"}[fd.Name != ""], "not a usable name: %v", err)
	}
	d.Role = strings.TrimSpace(fd.Role)
	d.Enabled = fd.Enabled == nil || *fd.Enabled
	d.Model = fd.LLMModel
	if s := fd.ModelServer; s != nil {
		if s.Provider != "" && s.Provider != "ollama" && s.Provider != "openai" {
			bad("model_server.provider", "%q: want ollama or openai", s.Provider)
		}
		d.Server = &Server{Provider: cmp.Or(s.Provider, "ollama"), URL: s.URL}
	}
	if t := fd.Temperature; t != nil {
		if *t < 0 || *t > 2 {
			bad("temperature", "%v: want 0–2", *t)
		}
		d.Temperature = t
	}
	if fd.MaxTokens < 0 {
		bad("max_tokens", "%d: want a positive number of tokens", fd.MaxTokens)
	}
	d.MaxTokens = fd.MaxTokens
	if fd.Heartbeat != "" {
		hb, err := time.ParseDuration(fd.Heartbeat)
		if err != nil || hb <= 0 {
			bad("heartbeat", "%q: want a positive Go duration such as 6s or 1m", fd.Heartbeat)
		}
		d.Heartbeat = hb
	}
	if fd.Budget != "" {
		b, err := budget.Parse(fd.Budget)
		if err != nil {
			bad("budget", "%v", err)
		}
		d.Budget = b
	}
	if fd.Tools != nil {
		d.Tools = slices.Clone(*fd.Tools)
		if d.Tools == nil {
			d.Tools = []string{}
		}
	}
	d.Traits, d.Domains = fd.Traits, fd.Domains
	if r := fd.RAG; r != nil {
		if r.Limit < 0 {
			bad("rag.limit", "%d: want 1 or more", r.Limit)
		}
		d.RAG = *r
		if d.RAG.Enabled && d.RAG.Limit == 0 {
			d.RAG.Limit = 5
		}
	}
	if w := fd.WorkingMemory; w != nil {
		if w.MaxSizeBytes < 0 {
			bad("working_memory.max_size_bytes", "%d: want a positive number of bytes", w.MaxSizeBytes)
		}
		d.WorkingMemory = WorkingMemory{Enabled: w.Enabled, MaxBytes: cmp.Or(w.MaxSizeBytes, DefaultWorkingMemoryBytes)}
		for key, v := range map[string]*bool{"auto_inject": w.AutoInject, "include_in_rag": w.IncludeInRAG, "structured_format": w.StructuredFormat, "warn_on_missing": w.WarnOnMissing} {
			if v != nil {
				k := "working_memory." + key
				l.ignored = append(l.ignored, Ignored{File: l.file, Line: l.lineOf("$." + k), Key: k})
			}
		}
		slices.SortFunc(l.ignored, func(a, b Ignored) int { return a.Line - b.Line })
	}
	if fd.Workflow != nil {
		d.Workflow = l.workflow(fd.Workflow)
		if d.Workflow != nil && !d.WorkingMemory.Enabled {
			for i, s := range d.Workflow.Steps {
				if s.Action == "update_goals" {
					l.fail(l.lineOf(fmt.Sprintf("$.workflow.steps[%d].action", i)), 0, ErrInvalid,
						"workflow step %d: update_goals keeps the goal hierarchy in the working memory: turn working_memory on", i+1)
				}
			}
		}
	}

	// system_prompt.md replaces the role key; BOOTSTRAP.md is kept.
	if data, missing := l.read(SystemPromptFile, 0); !missing && data != nil {
		d.Role = strings.TrimSpace(string(data))
	}
	if data, missing := l.read(BootstrapFile, 0); !missing && data != nil {
		d.Bootstrap = string(data)
		d.BootstrapPath = path.Join(l.folder, BootstrapFile)
	}
	return d
}

// workflow converts and validates the workflow block.
func (l *loader) workflow(fw *fileWorkflow) *workflow.Workflow {
	w := &workflow.Workflow{}
	if eh := fw.ErrorHandling; eh != nil {
		w.OnStepFailure = workflow.OnFailure(eh.OnStepFailure)
	}
	for i, fs := range fw.Steps {
		s := workflow.Step{Name: fs.Name, Type: workflow.StepType(fs.Type), Prompt: fs.Prompt, Action: fs.Action}
		at := fmt.Sprintf("$.workflow.steps[%d]", i)
		if fs.PromptFile != "" {
			line := l.lineOf(at + ".prompt_file")
			if fs.Prompt != "" {
				l.fail(line, 0, ErrInvalid, "workflow step %d: prompt and prompt_file both given; give one", i+1)
			}
			data, missing := l.read(fs.PromptFile, line)
			if missing {
				l.fail(line, 0, ErrFile, "workflow step %d: prompt_file %s: no such file in %s", i+1, fs.PromptFile, filepath.Join(l.dir, l.folder))
			}
			s.Prompt = string(data)
		}
		if fs.Schema != nil {
			b, err := json.Marshal(fs.Schema)
			if err != nil {
				l.fail(l.lineOf(at+".schema"), 0, ErrType, "workflow step %d: schema: %v", i+1, err)
			}
			s.Schema = b
		}
		if c := fs.When; c != nil {
			s.When = &workflow.Condition{Every: c.Every, Stuck: c.Stuck, SuccessRateBelow: c.SuccessRateBelow}
		}
		w.Steps = append(w.Steps, s)
	}
	if len(l.errs) > 0 {
		return nil
	}
	if err := w.Validate(l.opts.Actions...); err != nil {
		line := l.lineOf("$.workflow")
		var se *workflow.StepError
		if errors.As(err, &se) {
			at := fmt.Sprintf("$.workflow.steps[%d]", se.Index)
			line = cmp.Or(l.lineOf(at+"."+se.Field), l.lineOf(at))
		} else if strings.Contains(err.Error(), "on_step_failure") {
			line = l.lineOf("$.workflow.error_handling.on_step_failure")
		}
		l.fail(line, 0, ErrInvalid, "workflow: %s", strings.TrimPrefix(err.Error(), workflow.ErrInvalid.Error()+": "))
		return nil
	}
	return w
}
