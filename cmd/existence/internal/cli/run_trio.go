package cli

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/existence-loop/sdk/a2aserver"
	"github.com/existence-loop/sdk/agentdef"
	"github.com/existence-loop/sdk/clock"
	"github.com/existence-loop/sdk/cmd/internal/storespec"
	"github.com/existence-loop/sdk/existence"
	"github.com/existence-loop/sdk/existence/event"
	"github.com/existence-loop/sdk/existence/requests"
	"github.com/existence-loop/sdk/existence/runner"
	"github.com/existence-loop/sdk/existence/toolloop"
	roster "github.com/existence-loop/sdk/existence/trio"
	"github.com/existence-loop/sdk/existence/workspace"
	"github.com/existence-loop/sdk/hollow"
	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/llm"
	"github.com/existence-loop/sdk/llm/ctxwindow"
	"github.com/existence-loop/sdk/llm/ollama"
	"github.com/existence-loop/sdk/llm/openai"
	"github.com/existence-loop/sdk/memory"
	"github.com/existence-loop/sdk/prompt"
	"github.com/existence-loop/sdk/store/memstore"
	"github.com/existence-loop/sdk/store/pgstore"
	"github.com/existence-loop/sdk/store/taskqueue"
	"github.com/existence-loop/sdk/task"
)

// member is one agent of the trio (from the roster, existence/trio) or
// of -agents.
type member struct {
	id, name, role string
	traits         []string
	domains        []string
	def            *agentdef.Definition // with -agents: the agent's definition
}

// members is the trio of the roster (existence/trio), or the agents of
// -agents when given.
var members = fromRoster(roster.Members())

// fromRoster makes the trio's members from the roster.
func fromRoster(ms []roster.Member) []member {
	out := make([]member, len(ms))
	for i, m := range ms {
		out[i] = member{id: m.ID, name: m.Name, role: m.Instruction, traits: m.Traits, domains: m.Domains}
	}
	return out
}

// worldText is the trio's world context (spec §2 row 3, §7): the world the
// agents really run in, identical every cycle. ids are the agents' ids
// (the trio's: scout, analyst, builder).
func worldText(workspaceDir string, ids []string, what string) string {
	folders := make([]string, len(ids))
	for i, id := range ids {
		folders[i] = id + "/"
	}
	return strings.Join([]string{
		"You are running as a Go program on a real computer, in the existence-loop SDK's " + what + ".",
		"Your world is one workspace directory shared with your peers: " + workspaceDir + ". Every path you use is relative to it.",
		"Your tools are read_file, write_file, append_file, list_files and delete_file, which work only inside the workspace, send_message, which writes to a peer, and ask_human and check_request, with which you ask your human for an approval, an answer or something only a person can build.",
		"There is no network, no shell and no code execution: what you make is text files — notes, designs, data, code for a person to read.",
		"There is no hardware layer accessible to you — no thermal sensors, no PMIC, no CPU registers, no bus arbiter.",
		"Each agent keeps its own work in a folder named after its id (" + strings.Join(folders, ", ") + "); design/ holds shared design specs. You may read everything.",
	}, "\n")
}

// trioGoals are the ranked goals of the directive (spec §7, adapted to the
// trio's real world).
var trioGoals = []string{
	"Read real files in the workspace (list_files, read_file) and improve on what is there",
	"Write a new, useful file in your own folder — a note, a dataset, a tool written as code",
	"Write a design spec to design/ for something a person could build",
	"Review a peer's file and write your assessment next to it, citing paths as evidence",
	"Finish or fix something you or a peer left incomplete",
}

const trioProhibitions = "goals referencing hardware, thermal sensors, PMIC, bus arbiters, the network, or tools you do not have. Do NOT repeat goals you've already done."

// runTrio wires the SDK together and runs (or dry-runs) the trio.
func runTrio(ctx context.Context, o *runOptions, stdout, stderr io.Writer) (err error) {
	defer func() { err = corruptHint(err, o) }()
	log := logger(stderr)
	roster := members
	if o.agents != "" { // before anything opens: a bad definition starts nothing
		var err error
		if roster, err = loadAgents(o, stderr); err != nil {
			return err
		}
	}
	var clock clock.Clock = clock.System
	if !o.now.IsZero() {
		clock = fixedClock{o.now}
	}
	// A tool call must never write the agents' saved state: the state and
	// the workspace may not be one directory, or either inside the other.
	if err := storespec.CheckWorkspace(cmp.Or(o.store, o.state), o.workspace); err != nil {
		return fmt.Errorf("-state/-store and -workspace: %w", err)
	}
	store, tasks, closeState, err := openState(ctx, o, clock, log)
	if err != nil {
		return err
	}
	defer closeState.Close()
	if o.show != "" {
		return showState(ctx, store, o.show, stdout)
	}
	reqs, err := openRequests(ctx, o, clock, store)
	if err != nil {
		return err
	}
	if err := importHollow(ctx, o, clock, store, stderr); err != nil {
		return err
	}
	t := &trio{o: o, store: store, tasks: tasks, reqs: reqs, log: log, stdout: stdout, stderr: stderr, roster: roster}
	defer t.close()
	if err := t.open(ctx, clock); err != nil {
		return err
	}
	if err := t.addMembers(ctx); err != nil {
		return err
	}
	if o.dryRun {
		return t.preview(ctx)
	}
	return t.run(ctx)
}

// corruptHint adds to an error about a corrupt document how to recover:
// for an agent's state or tasks.json, -fresh-on-corrupt (which moves the
// file aside, kept, and starts afresh); for the other documents, which it
// does not cover, moving the file aside by hand. Other errors, and a run
// with -fresh-on-corrupt or -dry-run (which writes nothing), are returned
// as they are.
func corruptHint(err error, o *runOptions) error {
	var ce *identity.CorruptError
	if err == nil || o.fresh || o.dryRun || o.show != "" || !errors.As(err, &ce) {
		return err
	}
	switch ce.Kind {
	case "", "state document", "queue file":
		return fmt.Errorf("%w\nThe file is left as it is. To start afresh, run again with -fresh-on-corrupt: it moves the corrupt file aside (kept, with a timestamp) and starts that agent or queue anew; or repair the file by hand", err)
	default:
		return fmt.Errorf("%w\nThe file is left as it is: repair it, or move it aside by hand (-fresh-on-corrupt covers agent states and tasks.json only), and run again", err)
	}
}

// importHollow imports the original system's state with -hollow.
func importHollow(ctx context.Context, o *runOptions, clock clock.Clock, store identity.Store, stderr io.Writer) error {
	if o.importHollow == "" {
		return nil
	}
	loc, err := time.LoadLocation(o.hollowTZ)
	if err != nil {
		return fmt.Errorf("-hollow-tz: %w", err)
	}
	// A dry run imports into its in-memory overlay, so it may replace.
	opts := hollow.Options{Location: loc, Now: clock.Now, Replace: o.replace || o.dryRun}
	sum, err := hollow.Import(ctx, o.importHollow, store, opts)
	if err != nil {
		return fmt.Errorf("import %s: %w", o.importHollow, err)
	}
	fmt.Fprintf(stderr, "trio: imported from %s:\n%s\n", o.importHollow, sum)
	return nil
}

// trio is one run of the trio: what runTrio opened, closed in reverse
// order by close.
type trio struct {
	o              *runOptions
	store          identity.Store
	tasks          task.Queue
	reqs           *requests.Queue
	log            *slog.Logger
	stdout, stderr io.Writer
	mcpOut         io.Writer // the MCP server's output with -mcp-serve

	roster    []member        // the trio's members, or the -agents definitions
	tools     []toolloop.Tool // the workspace's file tools, MCP's and the requests'
	senses    []existence.Mind
	world     string // the world context, with the MCP servers' part
	names     []idName
	model     llm.Model
	modelName string // the banner's "ollama at "
	mem       *memory.Memory
	rnr       *runner.Runner
	closers   []func()

	models models                          // the definitions' own models (run_agents.go)
	defsMu sync.Mutex                      // guards defs
	defs   map[string]*agentdef.Definition // the running definitions by id, for reload
}

// close closes what open opened, last first.
func (t *trio) close() {
	for i := len(t.closers) - 1; i >= 0; i-- {
		t.closers[i]()
	}
}

// open opens the workspace and the senses (not in a dry run), the shared
// board, the MCP servers, the model and the memory, and builds the runner.
func (t *trio) open(ctx context.Context, clock clock.Clock) error {
	o := t.o
	if !o.dryRun {
		ws, err := workspace.Open(o.workspace, workspace.Limits{})
		if err != nil {
			return err
		}
		t.closers = append(t.closers, func() { ws.Close() })
		t.tools = ws.Tools()
		if t.senses, err = o.senses.minds(o.workspace); err != nil {
			return err
		}
	}
	board, err := sharedBoard(ctx, t.store, clock)
	if err != nil {
		return fmt.Errorf("the shared board of slots: %w", err)
	}
	mcpTools, mcpWorld, closeMCP, err := connectMCP(ctx, o, t.reqs, t.roster[0].id, t.log, t.stderr)
	if err != nil {
		return err
	}
	t.closers = append(t.closers, closeMCP)
	t.tools = append(t.tools, mcpTools...)
	a2aTools, closeA2A, err := connectA2A(ctx, o.a2a, t.stderr)
	if err != nil {
		return err
	}
	t.closers = append(t.closers, closeA2A)
	t.tools = append(t.tools, a2aTools...)
	ids := make([]string, len(t.roster))
	for i, m := range t.roster {
		ids[i] = m.id
	}
	what := "trio example"
	if o.agents != "" {
		what = "run of agents defined in " + filepath.ToSlash(filepath.Clean(o.agents))
	}
	t.world = worldText(filepath.ToSlash(filepath.Clean(o.workspace))+"/", ids, what)
	if mcpWorld != "" {
		t.world += "\n" + mcpWorld
	}
	if t.names, err = agentNames(ctx, t.store, t.roster); err != nil { // as stored (imported), else the defaults
		return err
	}
	t.tools = append(t.tools, requests.Tools(t.reqs)...)
	t.modelName = o.provider + " at "
	if isStandin(o.llmURL) || slices.ContainsFunc(o.llmURLs, isStandin) {
		t.modelName = "the stand-in model (llm/llmtest, scripted: it lists the workspace and writes a note per goal) at "
	}
	model, stopModel, err := trioModel(o)
	if err != nil {
		return err
	}
	t.model = model
	t.closers = append(t.closers, stopModel)
	if t.mem, err = openMemory(o, t.store, t.log); err != nil {
		return err
	}
	if t.mem != nil {
		t.closers = append(t.closers, func() { t.mem.Close() })
	}
	return t.newRunner(clock, board)
}

// newRunner builds the runner, which prints its events (to stderr when
// stdout carries MCP, nowhere under the terminal view).
func (t *trio) newRunner(clock clock.Clock, board *identity.SharedBoard) error {
	o := t.o
	t.mcpOut = t.stdout
	if o.mcp.serve {
		t.stdout = t.stderr // stdout carries MCP
	}
	out := newPrinter(o, t.stdout, t.stderr)
	if o.tui { // the terminal view owns the screen
		out = newPrinter(o, io.Discard, io.Discard)
	}
	rnr, err := runner.New(runner.Config{
		Store:     t.store,
		Clock:     clock,
		Heartbeat: o.heartbeat,
		Observer:  event.Observers(out.observe, o.mcp.events.Observe),
		Logger:    t.log,

		SharedSlots:     board,
		Minds:           t.senses,
		AutonomyWorkers: autonomyWorkers(o.workers),
		Budget:          o.tokenBudget,
		TracerProvider:  o.tracing.tracerProvider(),
		TraceContent:    o.tracing.traceContent(),
	})
	if err != nil {
		return err
	}
	t.rnr = rnr
	t.closers = append(t.closers, func() {
		if err := rnr.Close(); err != nil {
			fmt.Fprintln(t.stderr, "trio: closing:", err)
		}
	})
	return nil
}

// profile is what an agent's A2A card says of it: its role, and its
// tools as skills.
func (t *trio) profile(a *existence.Agent) a2aserver.Profile {
	p := a2aserver.Profile{Skills: toolSkills(t.tools)}
	for _, m := range t.roster {
		if m.id == a.ID() {
			p.Description = a.Name() + " is " + strings.TrimPrefix(m.role, "You are ") + " It takes the tasks given to it into its queue and pursues each as a goal at its next existence cycle."
			p.Skills = append(p.Skills, toolSkills([]toolloop.Tool{sendMessage(func() *runner.Runner { return t.rnr }, m.id, t.names)})...)
		}
	}
	return p
}

// addMembers adds the agents (the trio's three, or the -agents
// definitions), each with its tool loop and prompt.
func (t *trio) addMembers(ctx context.Context) error {
	for _, m := range t.roster {
		cfg, err := t.memberConfig(m)
		if err != nil {
			return err
		}
		if _, err = t.rnr.Add(ctx, cfg); err != nil {
			return fmt.Errorf("%s: %w", m.id, err)
		}
	}
	return nil
}

// memberConfig builds m's configuration: its tool loop, its prompt and,
// for a definition, what it sets (agentdef.Definition.Config) with its
// own model and tools.
func (t *trio) memberConfig(m member) (existence.Config, error) {
	o := t.o
	tools := append(slices.Clone(t.tools), sendMessage(func() *runner.Runner { return t.rnr }, m.id, t.names))
	model := t.model
	commission, err := t.commissioning(m)
	if err != nil {
		return existence.Config{}, err
	}
	if commission != nil {
		tools = append(tools, toolloop.CommissioningTool(func(id string) *existence.Agent { return t.rnr.Agent(id) }))
		if o.dryRun {
			commission.Archive = nil // a dry run writes nothing
		}
	}
	if m.def != nil {
		if !o.dryRun { // a dry run opens no workspace: it has no file tools to pick from
			if tools, err = pickTools(m.def, tools); err != nil {
				return existence.Config{}, err
			}
		}
		if model, err = t.memberModel(m.def); err != nil {
			return existence.Config{}, err
		}
	}
	tc := toolloop.Config{
		// No Model: the executor uses the agent's, wrapped with its
		// timeout, the runner's call limit, retry and per-attempt events.
		Tools:       tools,
		ToolTimeout: time.Minute,
		MaxTokens:   o.toolReplyTokens,
		World:       t.world + "\n" + m.role + " Your own folder is " + m.id + "/.",
	}
	exec, err := toolloop.New(tc)
	if err != nil {
		return existence.Config{}, err
	}
	if reserve, ok := fitTurn(t.stderr, o.contextWin, exec, m.name, tc.MaxTokens); ok && reserve != tc.MaxTokens {
		tc.MaxTokens = reserve
		if exec, err = toolloop.New(tc); err != nil {
			return existence.Config{}, err
		}
	}
	pc := prompt.Config{
		World:        t.world,
		Situation:    prompt.DefaultSituation + "\n" + m.role,
		Goals:        trioGoals,
		Prohibitions: trioProhibitions,
		Grounding:    "The goal must be grounded in what actually exists in the workspace.",
		Layout:       o.layout,
	}
	sections := func(asm *prompt.Assembler) error {
		placeSlots(asm)
		if t.mem != nil {
			if _, ok := asm.Section(prompt.SectionMemories); !ok {
				// The recalled memories after what the last goal produced;
				// absent while there are none, so the prompt is otherwise
				// the same.
				return asm.InsertAfter(prompt.SectionLastOutcome, prompt.Memories())
			}
		}
		return nil
	}
	asm := prompt.New(pc)
	if err := sections(asm); err != nil {
		return existence.Config{}, err
	}
	cfg := existence.Config{
		ID: m.id, Name: m.name, Traits: m.traits, Domains: m.domains,
		Model:          model,
		Prompt:         asm,
		Memory:         existence.MemoryConfig{LongTerm: t.mem},
		Executor:       exec,
		Tasks:          t.tasks,
		FreshOnCorrupt: o.fresh,
		Timing: existence.TimingConfig{
			CallTimeout:     o.llmTimeout,
			MaxCycles:       o.cycles,
			MaxGoalDuration: o.maxGoalDuration,
		},
		Calls: existence.CallConfig{
			Retry:     o.retry,
			MaxTokens: o.replyTokens,
		},
	}
	if m.def == nil {
		cfg.Commissioning = commission
		return cfg, nil
	}
	pc.Situation = "" // the definition's role follows the default situation
	cfg, err = m.def.Config(cfg, agentdef.ConfigOptions{Prompt: pc, Sections: sections})
	if err != nil {
		return existence.Config{}, err
	}
	cfg.Commissioning = commission
	return cfg, nil
}

// preview prints each agent's next prompt (-dry-run).
func (t *trio) preview(ctx context.Context) error {
	for _, a := range t.rnr.Agents() {
		p, err := a.Preview(ctx)
		if err != nil {
			return fmt.Errorf("%s: %w", a.ID(), err)
		}
		fmt.Fprintf(t.stdout, "=== prompt: %s ===\n%s\n", a.ID(), p.Text)
	}
	return nil
}

// run submits the -task tasks, starts the message relay, the monitor and
// the terminal view, MCP or the stdin listener as asked, and runs the
// agents until ctx ends.
func (t *trio) run(ctx context.Context) error {
	o, rnr := t.o, t.rnr
	for _, tk := range o.tasks {
		if _, err := t.tasks.Submit(ctx, tk, ""); err != nil {
			return fmt.Errorf("-task: %w", err)
		}
	}
	if pg, ok := t.store.(*pgstore.Store); ok {
		stop, err := relayMessages(ctx, pg, rnr, t.log)
		if err != nil {
			return err
		}
		defer stop()
	}
	if o.http != "" {
		stop, err := serveMonitor(o, rnr, t.tasks, t.reqs, t.mem, o.mcp.events, t.profile, t.log, t.stderr)
		if err != nil {
			return err
		}
		defer stop()
	}
	if o.agents != "" && !o.noReload {
		t.defs = map[string]*agentdef.Definition{}
		for _, m := range t.roster {
			t.defs[m.id] = m.def
		}
		stop, err := agentdef.Watch(ctx, o.agents, agentdef.Options{}, t.reload)
		if err != nil {
			return err
		}
		defer stop()
	}
	if o.tui {
		err := runTUI(ctx, o, rnr, t.reqs, t.stdout)
		if err == nil {
			t.saved() // after the terminal view has given the screen back
		}
		return err
	}
	fmt.Fprintf(t.stderr, "trio: %s%s, model %s; state in %s, workspace %s; type a line to speak to the agents (/help for commands); Ctrl-C to stop\n", t.modelName, o.llmURL, o.model, storeName(cmp.Or(o.store, o.state)), o.workspace)
	fmt.Fprintf(t.stderr, "trio: waiting for the model at %s…\n", o.llmURL)
	if o.mcp.serve {
		var err error
		if ctx, err = serveMCP(ctx, o, rnr, t.tasks, t.reqs, t.mcpOut, t.stderr); err != nil {
			return err
		}
	} else if o.stdin != nil {
		go listen(ctx, o.stdin, rnr, t.reqs, t.stderr)
	}
	err := rnr.Run(ctx)
	o.cacheCounts.report(t.stderr, "trio")
	if err == nil {
		t.saved()
	}
	return err
}

// saved prints the line that ends a clean stop (Ctrl-C, SIGTERM, or every
// agent at -cycles): Runner.Run returned nil, so every agent's final save
// succeeded; it says where the state is, and how to continue.
func (t *trio) saved() {
	ids := make([]string, len(t.roster))
	for i, m := range t.roster {
		ids[i] = m.id
	}
	fmt.Fprintf(t.stderr, "trio: stopped; the state of %s is saved in %s (run again with the same -store to continue)\n",
		strings.Join(ids, ", "), storeName(cmp.Or(t.o.store, t.o.state)))
}

// storeName is a -store spec as it may be printed: a URL's password is
// replaced by "xxxxx".
func storeName(spec string) string {
	if u, err := url.Parse(spec); err == nil && u.User != nil {
		return u.Redacted()
	}
	return spec
}

// fitTurn checks at start that a context window of window tokens (the
// operator's -context-window; 0, unknown, checks nothing) holds a tool-loop
// turn's fixed part (exec.FixedTokens) and its reply's reserve (maxTokens,
// at most a quarter of the window, as the adapters keep it). When it does
// not, it says so on w and returns the reserve shrunk to what is left when
// that is at least toolloop.MinTurnReply tokens, else false: every goal's first
// turn would then be refused, and w says how large a window would do.
func fitTurn(w io.Writer, window int, exec *toolloop.Executor, name string, maxTokens int) (int, bool) {
	if window <= 0 {
		return maxTokens, true
	}
	fixed := exec.FixedTokens(existence.Assignment{AgentName: name, Goal: identity.Goal{Objective: "map the workspace and write down what it holds, with paths"}}, llm.NewTokenEstimator())
	reserve := ctxwindow.Reserve(&llm.Request{MaxTokens: cmp.Or(maxTokens, toolloop.DefaultMaxTokens)}, 0, window)
	room := toolloop.ReplyRoom(window, fixed)
	if reserve <= room {
		return maxTokens, true
	}
	if room >= toolloop.MinTurnReply {
		fmt.Fprintf(w, "trio: %s: a context window of %d tokens cannot hold a tool-loop turn's fixed part (about %d tokens: instructions, goal, tool definitions) and its reply's reserve of %d: the reserve is shrunk to %d tokens\n",
			name, window, fixed, reserve, room)
		return room, true
	}
	fmt.Fprintf(w, "trio: %s: a context window of %d tokens cannot hold a tool-loop turn's fixed part (about %d tokens: instructions, goal, tool definitions) and a reply of %d: its goals will fail; give -context-window %d or more\n",
		name, window, fixed, toolloop.MinTurnReply, max((fixed*4+2)/3, window-room+toolloop.MinTurnReply))
	return maxTokens, false
}

// openMemory returns the agents' long-term memory with -memory (nil
// without): kept in the store (a dry run's overlay reads the stored
// memories and writes none), embedded with -embed-model.
func openMemory(o *runOptions, store identity.Store, log *slog.Logger) (*memory.Memory, error) {
	if !o.memory {
		return nil, nil
	}
	ms, ok := storespec.Memories(store)
	if ov, isOverlay := store.(*overlay); isOverlay {
		ms, ok = ov.memories(), true
	}
	if !ok {
		return nil, fmt.Errorf("-memory: the store keeps no memories")
	}
	o.embed.allowRedirect = o.allowRedir
	if o.embed.url == "" && slices.ContainsFunc(o.llmURLs, isStandin) {
		// The stand-in model embeds too: no Ollama needed for -memory.
		o.embed.url, o.embed.urls = standinScheme, []string{standinScheme}
	}
	emb, url, err := o.embed.embedder()
	if err != nil {
		return nil, fmt.Errorf("-memory: %w", err)
	}
	o.embed.url = url
	return memory.New(memory.Config{Store: ms, Embedder: emb, NoBackfill: o.dryRun, Logger: log})
}

// newModel builds the provider adapter and returns it with the server URL
// it resolved (from -llm-url, else the provider's environment variable and
// default).
func newModel(o *runOptions) (llm.Model, string, error) {
	if o.provider == "openai" {
		m, err := openai.New(openai.Config{BaseURL: o.llmURL, Model: o.model, ContextWindow: o.contextWin, HTTPClient: o.httpClient, AllowRedirect: o.allowRedir})
		if err != nil {
			return nil, "", err
		}
		return m, m.BaseURL(), nil
	}
	// One num_ctx for the run, chosen at start for its largest request
	// kind (or the larger one the model is already loaded with): Ollama
	// reloads the model whenever num_ctx changes.
	hold := o.holdNumCtx
	if hold == 0 {
		hold = -1
	}
	m, err := ollama.New(ollama.Config{URL: o.llmURL, Model: o.model, KeepAlive: &o.keepAlive, NumCtx: o.contextWin, HTTPClient: o.httpClient, AllowRedirect: o.allowRedir, HoldNumCtx: hold})
	if err != nil {
		return nil, "", err
	}
	return m, m.URL(), nil
}

// printer writes events: a readable thoughts log, or JSON lines with -json.
// A failure to reach the model is explained once on stderr.
type printer struct {
	o              *runOptions
	stdout, stderr io.Writer

	mu     sync.Mutex
	enc    *json.Encoder
	hinted map[string]bool
}

func newPrinter(o *runOptions, stdout, stderr io.Writer) *printer {
	return &printer{o: o, stdout: stdout, stderr: stderr, enc: json.NewEncoder(stdout), hinted: map[string]bool{}}
}

func (p *printer) observe(e event.Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	// A refused connection is a definite answer: the hint comes with the
	// first failed attempt, not after the retries' waits end in a
	// fallback.
	if e.Kind == event.Fallback || (e.Kind == event.ModelCall && e.Err != nil) {
		p.hint(e.Err)
	}
	mk := memoryKind(e)
	if mk == memory.EventPending || mk == memory.EventBackfillFailed {
		p.hintEmbedder(e.Memory.Cause)
	}
	if p.o.json {
		if err := p.enc.Encode(e); err != nil {
			fmt.Fprintln(p.stderr, "trio: writing event:", err)
		}
		return
	}
	// Without -v, a failed cycle shows as its fallback line and a failed
	// goal as its [FAILED] line: one line per failure, not one per attempt;
	// and a memory shows when it is stored, recalled, merged, evicted or
	// lost, not each time it waits for or gets its embedding.
	if !p.o.verbose && (e.Kind == event.Cycle || e.Kind == event.ModelCall ||
		mk == memory.EventPending || mk == memory.EventEmbedded || mk == memory.EventBackfillFailed) {
		return
	}
	fmt.Fprintln(p.stdout, e.String())
}

// memoryKind is the memory event's kind of an [event.Memory], ""
// for other events.
func memoryKind(e event.Event) memory.EventKind {
	if e.Kind != event.Memory || e.Memory == nil {
		return ""
	}
	return e.Memory.Kind
}

// hintEmbedder prints one stderr line when the embedder cannot be reached
// or lacks the model (the memory event's cause), saying what to run; the
// memories are kept as text.
func (p *printer) hintEmbedder(cause string) {
	var msg string
	switch cause {
	case "unavailable":
		msg = fmt.Sprintf("cannot reach the embedder at %s — start it (ollama serve)", p.o.embed.url)
	case "model_not_found":
		msg = fmt.Sprintf("embedding model %s not found at %s", p.o.embed.model, p.o.embed.url)
		if p.o.embed.provider == "ollama" {
			msg += fmt.Sprintf(" — run `ollama pull %s`", p.o.embed.model)
		}
	default:
		return
	}
	if !p.hinted["embed"] {
		p.hinted["embed"] = true
		fmt.Fprintln(p.stderr, "trio:", msg+"; memories are kept as text and embedded once it answers")
	}
}

// hint prints one stderr line per kind of unreachable model, saying what
// to run.
func (p *printer) hint(err error) {
	var key, msg string
	switch {
	case errors.Is(err, llm.ErrUnavailable):
		key = "unavailable"
		if p.o.provider == "ollama" {
			msg = fmt.Sprintf("cannot reach Ollama at %s — start it with `ollama serve` (then `ollama pull %s`); the agents keep running on the fallback goal", p.o.llmURL, p.o.model)
		} else {
			msg = fmt.Sprintf("cannot reach the model server at %s — start it; the agents keep running on the fallback goal", p.o.llmURL)
		}
		msg += ". To see the loop work without a model server, " + standinTry + " (a scripted stand-in model)"
	case errors.Is(err, llm.ErrModelNotFound):
		key = "model"
		msg = fmt.Sprintf("model %s not found at %s", p.o.model, p.o.llmURL)
		if p.o.provider == "ollama" {
			msg += fmt.Sprintf(" — run `ollama pull %s`", p.o.model)
		}
		msg += "; the agents keep running on the fallback goal"
	default:
		return
	}
	if !p.hinted[key] {
		p.hinted[key] = true
		fmt.Fprintln(p.stderr, "trio:", msg)
	}
}

// openState opens the agents' store and the task queue: the -state
// directory, or the -store spec (cmd/internal/storespec: DIR or sqlite:PATH).
// A dry run writes nothing: its store is an in-memory overlay over the
// stored states (when there are any), and it takes no lock.
func openState(ctx context.Context, o *runOptions, clock clock.Clock, log *slog.Logger) (identity.Store, task.Queue, io.Closer, error) {
	spec := o.store
	if spec == "" {
		spec = o.state
	}
	if o.dryRun {
		ov := &overlay{mem: memstore.New()}
		var tasks task.Queue = taskqueue.NewMemory(taskqueue.Options{Now: clock.Now})
		if kind, _ := storespec.Kind(spec); kind == "dir" {
			if _, err := os.Stat(spec); err != nil {
				return ov, tasks, io.NopCloser(nil), nil // nothing stored yet
			}
		}
		base, qt, closer, err := storespec.Open(ctx, spec, storespec.Options{Now: clock.Now, Logger: log})
		if err != nil {
			return nil, nil, nil, err
		}
		ov.base = base
		return ov, qt, closer, nil
	}
	// -fresh-on-corrupt applies to the task queue too: a corrupt
	// tasks.json is moved aside and the queue starts empty.
	return storespec.Open(ctx, spec, storespec.Options{Now: clock.Now, FreshOnCorrupt: o.fresh, Logger: log})
}

// showState prints agent id's stored state as indented JSON (-show).
func showState(ctx context.Context, store identity.Store, id string, stdout io.Writer) error {
	st, err := store.Load(ctx, id)
	if err != nil {
		return fmt.Errorf("-show %s: %w", id, err)
	}
	enc := json.NewEncoder(stdout)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(st); err != nil {
		return fmt.Errorf("-show %s: %w", id, err)
	}
	return nil
}

// overlay is the dry run's store: reads fall through to base (the state
// directory, if any); saves stay in memory.
type overlay struct {
	mem  *memstore.Store
	base identity.Store // nil when there is no state directory
}

func (o *overlay) Load(ctx context.Context, id string) (*identity.AgentState, error) {
	st, err := o.mem.Load(ctx, id)
	if errors.Is(err, identity.ErrNotFound) && o.base != nil {
		return o.base.Load(ctx, id)
	}
	return st, err
}

func (o *overlay) Save(ctx context.Context, s *identity.AgentState) error { return o.mem.Save(ctx, s) }

// memories returns the memories a dry run reads: the stored ones, else
// none. A dry run only previews, and a preview writes no memory.
func (o *overlay) memories() memory.Store {
	if ms, ok := o.base.(memory.Store); ok {
		return ms
	}
	return o.mem
}

func (o *overlay) List(ctx context.Context) ([]string, error) {
	ids, err := o.mem.List(ctx)
	if err != nil || o.base == nil {
		return ids, err
	}
	more, err := o.base.List(ctx)
	if err != nil {
		return nil, err
	}
	ids = append(ids, more...)
	slices.Sort(ids)
	return slices.Compact(ids), nil
}

// fixedClock is the -now clock: time stands still, and tickers and timers
// run in real time (a dry run never waits for one).
type fixedClock struct{ t time.Time }

func (c fixedClock) Now() time.Time { return c.t }

func (c fixedClock) NewTicker(d time.Duration) (<-chan time.Time, func()) {
	return clock.System.NewTicker(d)
}

func (c fixedClock) AfterFunc(d time.Duration, f func()) func() bool {
	return clock.System.AfterFunc(d, f)
}

// relayMessages delivers the messages other processes leave for the agents
// in a PostgreSQL store (pgstore.Store.Send: a person's message through
// `existence serve`, a peer in another process): those waiting now before
// it returns, so that the first cycles read them, then the rest as they
// come (pgstore.Store.Relay) until stop is called.
func relayMessages(ctx context.Context, pg *pgstore.Store, rnr *runner.Runner, log *slog.Logger) (stop func(), err error) {
	for _, a := range rnr.Agents() {
		if _, err := pg.DeliverPending(ctx, a.ID(), a); err != nil {
			return nil, fmt.Errorf("delivering the messages waiting for %s: %w", a.ID(), err)
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		err := pg.Relay(ctx, time.Second, func(id string) pgstore.Recipient {
			if a := rnr.Agent(id); a != nil {
				return a
			}
			return nil
		})
		if err != nil && ctx.Err() == nil {
			log.Error("trio: relaying messages stopped", "err", err)
		}
	}()
	return func() { cancel(); <-done }, nil
}
