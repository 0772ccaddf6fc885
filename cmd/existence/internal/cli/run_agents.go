package cli

import (
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
	"sync"
	"time"

	"github.com/existence-loop/sdk/agentdef"
	"github.com/existence-loop/sdk/existence"
	"github.com/existence-loop/sdk/existence/toolloop"
	"github.com/existence-loop/sdk/llm"
)

// loadAgents loads the -agents directory into the roster: the enabled
// definitions, in their folders' order. The keys it ignored are listed on
// stderr; any problem in any definition stops the run before anything
// starts.
func loadAgents(o *runOptions, stderr io.Writer) ([]member, error) {
	set, err := agentdef.Load(o.agents, agentdef.Options{})
	if err != nil {
		return nil, fmt.Errorf("-agents %s: the definitions do not load, so nothing starts:\n%w", o.agents, err)
	}
	for _, i := range set.Ignored {
		fmt.Fprintf(stderr, "agents: %s ignored (not used by this SDK)\n", i)
	}
	var roster []member
	for _, d := range set.Enabled() {
		roster = append(roster, memberOf(d))
		if d.RAG.Enabled && !o.memory {
			fmt.Fprintf(stderr, "agents: %s:%d: rag is on but long-term memory is off (-memory): no memories are recalled\n", d.File, d.Line("rag"))
		}
	}
	if len(roster) == 0 {
		return nil, fmt.Errorf("-agents %s: no enabled agent (a folder per agent, each with an agent.yaml)", o.agents)
	}
	return roster, nil
}

// memberOf is the roster entry of a definition.
func memberOf(d *agentdef.Definition) member {
	return member{id: d.ID, name: d.Name, role: d.Role, traits: d.Traits, domains: d.Domains, def: d}
}

// pickTools returns the tools d's tools key names, in that order (all of
// them when it has none); complete_commissioning is always kept. A name
// no tool has is an error naming the file and line.
func pickTools(d *agentdef.Definition, tools []toolloop.Tool) ([]toolloop.Tool, error) {
	if d.Tools == nil {
		return tools, nil
	}
	var out, commission []toolloop.Tool
	var names []string
	for _, t := range tools {
		names = append(names, t.Name())
		if t.Name() == toolloop.CommissioningToolName {
			commission = append(commission, t)
		}
	}
	for _, name := range d.Tools {
		i := slices.Index(names, name)
		if i < 0 {
			return nil, &agentdef.Error{File: d.File, Line: d.Line("tools"), Kind: agentdef.ErrInvalid,
				Msg: fmt.Sprintf("tools: no tool %q here; the tools are %s", name, strings.Join(names, ", "))}
		}
		out = append(out, tools[i])
	}
	return append(out, commission...), nil
}

// models caches the models of the definitions' llm_model and
// model_server, one per provider, URL and model.
type models struct {
	mu sync.Mutex
	m  map[string]llm.Model
}

// memberModel is d's model: the command's, or one for its llm_model and
// model_server (started once per provider, URL and model; a stand-in URL
// starts a stand-in).
func (t *trio) memberModel(d *agentdef.Definition) (llm.Model, error) {
	if d.Model == "" && d.Server == nil {
		return t.model, nil
	}
	oi := *t.o
	if s := d.Server; s != nil {
		oi.provider = s.Provider
		if s.URL != "" {
			oi.llmURL, oi.llmURLs = s.URL, nil
		}
	}
	if d.Model != "" {
		oi.model = d.Model
	}
	key := oi.provider + "|" + oi.llmURL + "|" + strings.Join(oi.llmURLs, ",") + "|" + oi.model
	t.models.mu.Lock()
	defer t.models.mu.Unlock()
	if m, ok := t.models.m[key]; ok {
		return m, nil
	}
	m, stop, err := trioModel(&oi)
	if err != nil {
		return nil, fmt.Errorf("%s:%d: the model: %w", d.File, max(d.Line("llm_model"), d.Line("model_server")), err)
	}
	t.closers = append(t.closers, stop)
	if t.models.m == nil {
		t.models.m = map[string]llm.Model{}
	}
	t.models.m[key] = m
	return m, nil
}

// commissioning is m's commissioning: its definition's BOOTSTRAP.md, else
// a BOOTSTRAP.md in its own folder of the workspace (GSV keeps it in the
// agent's workspace); nil when it has neither. Archiving renames the file
// where it is.
func (t *trio) commissioning(m member) (*existence.Commissioning, error) {
	now := time.Now
	if m.def != nil && m.def.Bootstrap != "" {
		folder := filepath.Dir(m.def.File)
		return &existence.Commissioning{Instructions: m.def.Bootstrap, Archive: func() error { return agentdef.ArchiveBootstrap(folder, now()) }}, nil
	}
	if t.o.dryRun {
		return nil, nil
	}
	root, err := os.OpenRoot(t.o.workspace)
	if err != nil {
		return nil, nil // no workspace yet: no BOOTSTRAP.md in it
	}
	defer root.Close()
	name := path.Join(m.id, agentdef.BootstrapFile)
	fi, err := root.Stat(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(t.o.workspace, name), err)
	}
	if fi.Size() > agentdef.MaxFileBytes {
		return nil, fmt.Errorf("%s: %d bytes, at most %d", filepath.Join(t.o.workspace, name), fi.Size(), agentdef.MaxFileBytes)
	}
	b, err := root.ReadFile(name)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(t.o.workspace, name), err)
	}
	folder := filepath.Join(t.o.workspace, m.id)
	return &existence.Commissioning{Instructions: string(b), Archive: func() error { return agentdef.ArchiveBootstrap(folder, now()) }}, nil
}

// reload applies a changed definitions directory (agentdef.Watch) to the
// running agents, keeping their state: a new role, temperature, reply
// limit, workflow or working memory takes effect at the next cycle. A
// directory that no longer loads is reported and the running definitions
// kept; what only a restart can change (a new or removed agent, its name,
// model, server, heartbeat, budget, tools or commissioning) is reported.
func (t *trio) reload(set *agentdef.Set, err error) {
	if err != nil {
		fmt.Fprintf(t.stderr, "agents: %s changed but does not load; the running definitions are kept:\n%v\n", t.o.agents, err)
		return
	}
	t.defsMu.Lock()
	defer t.defsMu.Unlock()
	seen := map[string]bool{}
	for _, d := range set.Enabled() {
		seen[d.ID] = true
		old, ok := t.defs[d.ID]
		a := t.rnr.Agent(d.ID)
		if !ok || a == nil {
			fmt.Fprintf(t.stderr, "agents: %s is new in %s: restart to run it\n", d.ID, d.File)
			continue
		}
		if restart := restartOnly(old, d); len(restart) > 0 {
			fmt.Fprintf(t.stderr, "agents: %s: %s changed: restart to apply\n", d.ID, strings.Join(restart, ", "))
		}
		m := memberOf(d)
		m.def.Model, m.def.Server, m.def.Tools = old.Model, old.Server, old.Tools // kept until a restart
		cfg, err := t.memberConfig(m)
		if err == nil {
			err = a.Update(existence.Update{Prompt: cfg.Prompt, Temperature: &cfg.Calls.Temperature, MaxTokens: &cfg.Calls.MaxTokens, Cycle: &cfg.Calls.Cycle, WorkingMemory: &cfg.Memory.Working})
		}
		if err != nil {
			fmt.Fprintf(t.stderr, "agents: %s: the changed definition cannot be applied; the running one is kept: %v\n", d.ID, err)
			continue
		}
		t.defs[d.ID] = d
		fmt.Fprintf(t.stderr, "agents: %s reloaded from %s (its state kept)\n", d.ID, d.File)
	}
	for id := range t.defs {
		if !seen[id] {
			fmt.Fprintf(t.stderr, "agents: %s is gone from %s or disabled: it runs until a restart\n", id, t.o.agents)
		}
	}
}

// restartOnly names the keys that changed from old to d and that only a
// restart applies.
func restartOnly(old, d *agentdef.Definition) []string {
	var out []string
	for _, c := range []struct {
		key  string
		a, b any
	}{
		{"name", old.Name, d.Name}, {"llm_model", old.Model, d.Model}, {"model_server", old.Server, d.Server},
		{"heartbeat", old.Heartbeat, d.Heartbeat}, {"budget", old.Budget, d.Budget}, {"tools", old.Tools, d.Tools},
		{"BOOTSTRAP.md", old.Bootstrap, d.Bootstrap},
	} {
		if !reflect.DeepEqual(c.a, c.b) {
			out = append(out, c.key)
		}
	}
	return out
}
