package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/existence-loop/sdk/existence/budget"
	"github.com/existence-loop/sdk/llm/llmtest"
	"github.com/existence-loop/sdk/llm/middleware"
	"github.com/existence-loop/sdk/prompt"
)

// runCommand is `existence run`: Cedar (scout), Cipher (analyst) and Vault
// (builder) as peers in one process, the existence loop of the reference
// system, against a local Ollama server (or any OpenAI-compatible server),
// with real, sandboxed workspace tools.
var runCommand = &command{
	name:    "run",
	summary: "run Cedar, Cipher and Vault as peers (the trio), talking to them on stdin",
	about: `State lives in ./trio-state (identity, suffering, goal history, inbox and
task queue), or in -store; the agents' files in ./trio-workspace. Stop with
Ctrl-C: the state is saved, and the next run continues where this one
stopped.

  {prog}                   needs ollama serve and ollama pull qwen3.5:9b
  {prog} -llm-url standin: no model server: a scripted stand-in model that
                           calls the workspace tools (goals end DONE)
  {prog} -dry-run          print each agent's prompt; no model call
  {prog} -cycles 3 -json   events as JSON lines
  {prog} -http 127.0.0.1:8080 -tui

Talk to the agents by typing: each line on standard input is a host message
("A PERSON SAID") to all three, or to one with "@scout text" (also @analyst,
@builder, or a name such as @Cedar). -task gives them a task to work on.
Agents file requests to you with their ask_human tool: /requests lists the
open ones, /answer N text, /approve N and /reject N why answer them (the
answer reaches the agent's inbox).`,
	setup: func(fs *flag.FlagSet) action {
		o := &runOptions{}
		o.flags(fs)
		return func(ctx context.Context, e *env, _ []string) (err error) {
			if err := o.check(); err != nil {
				return usageErr(err)
			}
			o.stdin = e.stdin
			tr, err := startTracing(ctx, e)
			if err != nil {
				return err
			}
			o.tracing = tr
			defer func() {
				sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
				defer cancel()
				err = errors.Join(err, tr.shutdown(sctx))
			}()
			return runTrio(ctx, o, e.stdout, e.stderr)
		}
	},
}

// runOptions are the run command's flags.
type runOptions struct {
	// holdNumCtx is ollama.Config.HoldNumCtx: the num_ctx of the run's
	// largest request kind. 0 (the trio's) means the usable window: a
	// tool-loop turn may grow to it before it is compacted.
	holdNumCtx   int
	provider     string
	llmURL       string
	llmURLs      []string // every -llm-url: more than one makes a pool.Pool
	model        string
	llmTimeout   time.Duration
	allowRedir   []string // -llm-allow-redirect: hosts the model and embedding servers may redirect to
	state        string
	workspace    string
	heartbeat    time.Duration
	cycles       int
	dryRun       bool
	nowText      string // -now as given
	now          time.Time
	json         bool
	importHollow string
	hollowTZ     string
	replace      bool
	verbose      bool
	keepAlive    time.Duration
	contextWin   int // -context-window: Ollama's num_ctx ceiling, an OpenAI-compatible server's window
	fresh        bool
	tasks        []string
	store        string // -store: "" (state, the default directory), DIR, sqlite:PATH or postgres://...
	show         string // -show AGENT: print the agent's state pretty and exit
	http         string // serve the monitor here
	httpToken    envToken
	httpOptOut   bool // -http-no-token-behind-proxy
	tui          bool
	memory       bool         // -memory: long-term memory
	embed        embedOptions // its embedder
	mcp          mcpOptions   // -mcp, -mcp-config, -mcp-serve (run_mcp.go)
	a2a          a2aOptions   // -a2a-agent, -a2a-token (run_a2a.go)
	tokenBudget  budget.Budget
	workers      int // -autonomy-workers; 0: adaptive
	tracing      *tracing
	// replyTokens and toolReplyTokens are -reply-tokens and
	// -tool-reply-tokens: the existence cycle's and a tool-loop turn's
	// reply limits.
	replyTokens, toolReplyTokens int

	senses senseOptions // -watch, -feed, -poll (run_senses.go)
	agents string       // -agents DIR: agents defined in files instead of the trio (run_agents.go)
	// noReload turns the -agents directory's watcher off (tests in a
	// synctest bubble, where a goroutine waiting on fsnotify would keep
	// time from moving).
	noReload bool

	// standin, when set, receives the stand-in server a "standin:" -llm-url
	// started; standinHTTP serves it in process instead of on loopback
	// (tests in a synctest bubble, where a socket would never let time
	// move).
	standin     func(*llmtest.Server)
	standinHTTP bool
	// cacheCounts, when set, counts the stand-in's KV-cache use by kind
	// of call.
	cacheCounts *cacheCounts
	// layout is -prompt-layout.
	layout     prompt.Layout
	httpClient *http.Client // the adapters' client; nil: their default

	// stdin carries host messages, one per line (nil: none).
	stdin io.Reader
	// retry is the model retry policy; tests shorten its waits.
	retry middleware.RetryPolicy
	// maxGoalDuration is existence.Config.Timing.MaxGoalDuration (0: the default
	// 2 minutes); tests turn the goal-span stall rule off (-1), so that a
	// loaded machine does not abandon their goals.
	maxGoalDuration time.Duration
}

// defaultOllamaModel is -model's default with -provider ollama.
const defaultOllamaModel = "qwen3.5:9b"

// flags registers the run command's flags on fs.
func (o *runOptions) flags(fs *flag.FlagSet) {
	fs.StringVar(&o.provider, "provider", "ollama", "model provider: ollama or openai (any OpenAI-compatible server)")
	fs.Func("llm-url", "server URL (default $OLLAMA_HOST, else http://127.0.0.1:11434; with -provider openai, a base URL ending in /v1, default $OPENAI_BASE_URL);\n"+
		"repeat it for a pool of servers, each agent pinned to one and moved to the next when its server fails"+standinHelp, func(s string) error {
		if o.llmURL == "" {
			o.llmURL = s
		}
		o.llmURLs = append(o.llmURLs, s)
		return nil
	})
	fs.Var(modelFlag{&o.model}, "model", "the model's `NAME`; with ollama default "+defaultOllamaModel+" (run ollama pull first); required with openai: the name the server serves (GET {base URL}/models lists them); never empty")
	modelServerFlags(fs, &o.llmTimeout, &o.allowRedir)
	if o.state == "" {
		o.state = "./trio-state" // the store when -store is not given
	}
	fs.StringVar(&o.store, "store", "", "where agent states, tasks and requests live: a directory (default ./trio-state), sqlite:PATH (one SQLite file) or postgres://... (a PostgreSQL database shared by processes)")
	aliasFlag(fs, "state", "store")
	fs.StringVar(&o.show, "show", "", "print the stored state of agent `AGENT` as indented JSON and exit")
	fs.StringVar(&o.workspace, "workspace", "./trio-workspace", "the agents' shared workspace directory")
	fs.StringVar(&o.agents, "agents", "", "run the agents defined in `DIR` instead of the trio: a folder per agent with agent.yaml and optionally system_prompt.md and BOOTSTRAP.md (docs/agents.md; existence init writes the trio as one); a changed definition is applied while running")
	fs.DurationVar(&o.heartbeat, "heartbeat", 6*time.Second, "tick interval")
	layoutFlag(fs, &o.layout)
	fs.IntVar(&o.cycles, "cycles", 0, "stop after N existence cycles per agent (0 = run until interrupted)")
	fs.BoolVar(&o.dryRun, "dry-run", false, "print each agent's assembled prompt, make no model call, and exit")
	fs.StringVar(&o.nowText, "now", "", "fixed clock, RFC 3339 (for dry runs)")
	fs.BoolVar(&o.json, "json", false, "print events as JSON lines on stdout")
	fs.StringVar(&o.importHollow, "hollow", "", "import this hollow-agentOS memory directory into -store first")
	aliasFlag(fs, "import-hollow", "hollow")
	fs.BoolVar(&o.replace, "import-replace", false, "with -hollow, replace agents already in -store")
	fs.StringVar(&o.hollowTZ, "hollow-tz", "UTC", "time zone of the hollow-agentOS \"YYYY-MM-DD HH:MM\" timestamps")
	fs.BoolVar(&o.verbose, "v", false, "also log every model call and cycle")
	fs.DurationVar(&o.keepAlive, "keep-alive", -time.Second, "with Ollama, how long the model stays loaded after a call (negative: forever, as the original)")
	fs.IntVar(&o.contextWin, "context-window", 0, "the largest context window in tokens: with Ollama, the ceiling of num_ctx (0: the model's length, capped at 32768); with openai, the server's window if you know it (0: learned from its errors)")
	fs.BoolVar(&o.fresh, "fresh-on-corrupt", false, "move a corrupt agent state or tasks.json aside (timestamped) and start afresh, instead of stopping")
	fs.Func("task", "assign a task to the first free agent (repeatable)", func(s string) error {
		if strings.TrimSpace(s) == "" {
			return errors.New("empty task")
		}
		o.tasks = append(o.tasks, s)
		return nil
	})
	fs.StringVar(&o.http, "http", "", "serve the monitor (dashboard, API, metrics) on this address, e.g. 127.0.0.1:8080")
	tokenFlag(fs, &o.httpToken, "bearer token the monitor requires (default $EXISTENCE_TOKEN; empty: none, fit only for loopback)")
	exposureFlags(fs, &o.httpOptOut)
	fs.BoolVar(&o.tui, "tui", false, "full-screen terminal view: agent panes, thoughts stream, input line")
	fs.BoolVar(&o.memory, "memory", false, "long-term memory: the agents store each step's outcome and each goal's end in the store, recall the 3 most relevant before a goal and in their prompt, and get remember and recall tools (embedded with -embed-model; run ollama pull nomic-embed-text)")
	o.embed.flags(fs)
	mcpFlags(fs, &o.mcp)
	a2aFlags(fs, &o.a2a)
	senseFlags(fs, &o.senses)
	budgetFlag(fs, &o.tokenBudget)
	workersFlag(fs, &o.workers)
	replyFlags(fs, &o.replyTokens, &o.toolReplyTokens)
}

// check validates the parsed flags and resolves the defaults that depend
// on others.
func (o *runOptions) check() error {
	if err := checkReply(o.replyTokens, o.toolReplyTokens); err != nil {
		return err
	}
	if o.nowText != "" {
		t, err := time.Parse(time.RFC3339, o.nowText)
		if err != nil {
			return fmt.Errorf("-now: %w", err)
		}
		o.now = t
	}
	// An empty -llm-url is resolved by the adapter ($OLLAMA_HOST, else
	// Ollama's default; $OPENAI_BASE_URL). The trio is for local servers,
	// so with openai a URL must be given somewhere.
	switch o.provider {
	case "ollama":
		if o.model == "" {
			o.model = defaultOllamaModel
		}
	case "openai":
		if o.llmURL == "" && os.Getenv("OPENAI_BASE_URL") == "" && !isStandin(o.llmURL) {
			return errors.New("-provider openai needs -llm-url (a base URL ending in /v1) or $OPENAI_BASE_URL")
		}
		if o.model == "" { // an Ollama model name means nothing to another server
			return errors.New("-provider openai needs -model: the name the server serves (GET {base URL}/models lists them)")
		}
	default:
		return fmt.Errorf("-provider %q: want ollama or openai", o.provider)
	}
	if o.heartbeat <= 0 || o.llmTimeout <= 0 {
		return errors.New("-heartbeat and -llm-timeout must be positive")
	}
	if o.cycles < 0 {
		return errors.New("-cycles must be 0 or more")
	}
	if o.contextWin < 0 {
		return errors.New("-context-window must be 0 (the default) or more tokens")
	}
	if o.workers < 0 {
		return errors.New("-autonomy-workers must be 0 (adaptive) or more")
	}
	for _, u := range append([]string{o.llmURL}, o.llmURLs...) {
		if isStandin(u) {
			if _, err := parseStandin(u); err != nil {
				return err
			}
		}
	}
	o.httpToken.resolve()
	if err := checkExposure(o.http, o.httpToken.String(), o.httpOptOut); err != nil {
		return err
	}
	return o.embed.check()
}

// parseRunFlags parses the run command's arguments (tests use it). The
// error is flag.ErrHelp for -h.
func parseRunFlags(args []string, stderr io.Writer) (*runOptions, error) {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	o := &runOptions{}
	o.flags(fs)
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments: %v", fs.Args())
	}
	if err := o.check(); err != nil {
		return nil, err
	}
	return o, nil
}

// logger returns the diagnostics logger: warnings and errors on stderr.
func logger(stderr io.Writer) *slog.Logger {
	return slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
}
