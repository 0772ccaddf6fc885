// Command trio runs Cedar (scout), Cipher (analyst) and Vault (builder) as
// peers in one process: the existence loop of the reference system, against
// a local Ollama server (or any OpenAI-compatible server), with real,
// sandboxed workspace tools.
//
//	go run ./examples/trio                  # needs `ollama serve` and `ollama pull qwen3.5:9b`
//	go run ./examples/trio -dry-run         # print each agent's prompt; no model call
//	go run ./examples/trio -cycles 3 -json  # events as JSON lines
//
// State lives in ./trio-state (identity, suffering, goal history, inbox and
// task queue); the agents' files in ./trio-workspace. Stop with Ctrl-C: the
// state is saved, and the next run continues where this one stopped.
//
// Talk to the agents by typing: each line on standard input is a host
// message ("A PERSON SAID") to all three, or to one with "@scout text"
// (also @analyst, @builder, or a name such as @Cedar). -task gives them a
// task to work on. Agents file requests to you with their ask_human tool:
// /requests lists the open ones, /answer N text, /approve N and
// /reject N why answer them (the answer reaches the agent's inbox).
//
//	go run ./examples/trio -http 127.0.0.1:8080  # also serve the web dashboard (prints its address)
//	go run ./examples/trio -tui                  # full-screen terminal view
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/existence-loop/sdk/llm"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run is main without the process: it parses args, runs the trio and
// returns the exit code. Tests call it directly.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	opts, err := parseFlags(args, stderr)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		fmt.Fprintln(stderr, "trio:", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	opts.stdin = stdin
	if err := runTrio(ctx, opts, stdout, stderr); err != nil {
		fmt.Fprintln(stderr, "trio:", err)
		return 1
	}
	return 0
}

// options are the trio's flags.
type options struct {
	provider     string
	llmURL       string
	model        string
	llmTimeout   time.Duration
	state        string
	workspace    string
	heartbeat    time.Duration
	cycles       int
	dryRun       bool
	now          time.Time
	json         bool
	importHollow string
	hollowTZ     string
	replace      bool
	verbose      bool
	keepAlive    time.Duration
	fresh        bool
	tasks        []string
	store        string // -store: "" (the -state directory) or "sqlite:PATH"
	show         string // -show AGENT: print the agent's state pretty and exit
	http         string // issue 12: serve the monitor here
	httpToken    string
	tui          bool
	mcp          mcpOptions // -mcp, -mcp-config, -mcp-serve (mcp.go)

	// stdin carries host messages, one per line (nil: none).
	stdin io.Reader
	// retry is the model retry policy; tests shorten its waits.
	retry llm.RetryPolicy
	// maxGoalHeartbeats is existence.Config.MaxGoalHeartbeats (0: the
	// default 8); tests on a 5 ms heartbeat turn the goal-span stall rule
	// off, so that a loaded machine does not abandon their goals.
	maxGoalHeartbeats int
}

// defaultOllamaModel is -model's default with -provider ollama.
const defaultOllamaModel = "qwen3.5:9b"

func parseFlags(args []string, stderr io.Writer) (*options, error) {
	fs := flag.NewFlagSet("trio", flag.ContinueOnError)
	fs.SetOutput(stderr)
	o := &options{}
	var now string
	fs.StringVar(&o.provider, "provider", "ollama", "model provider: ollama or openai (any OpenAI-compatible server)")
	fs.StringVar(&o.llmURL, "llm-url", "", "server URL (default $OLLAMA_HOST, else http://127.0.0.1:11434; with -provider openai, a base URL ending in /v1, default $OPENAI_BASE_URL)")
	fs.StringVar(&o.model, "model", "", "model name; with ollama default "+defaultOllamaModel+" (run ollama pull first); required with openai: the name the server serves (GET {base URL}/models lists them)")
	fs.DurationVar(&o.llmTimeout, "llm-timeout", 180*time.Second, "timeout of one model call")
	fs.StringVar(&o.state, "state", "./trio-state", "state directory")
	fs.StringVar(&o.store, "store", "", "where agent states and tasks live: a directory (default: -state), sqlite:PATH (one SQLite file) or postgres://... (a PostgreSQL database shared by processes)")
	fs.StringVar(&o.show, "show", "", "print the stored state of agent `AGENT` as indented JSON and exit")
	fs.StringVar(&o.workspace, "workspace", "./trio-workspace", "the agents' shared workspace directory")
	fs.DurationVar(&o.heartbeat, "heartbeat", 6*time.Second, "tick interval")
	fs.IntVar(&o.cycles, "cycles", 0, "stop after N existence cycles per agent (0 = run until interrupted)")
	fs.BoolVar(&o.dryRun, "dry-run", false, "print each agent's assembled prompt, make no model call, and exit")
	fs.StringVar(&now, "now", "", "fixed clock, RFC 3339 (for dry runs)")
	fs.BoolVar(&o.json, "json", false, "print events as JSON lines on stdout")
	fs.StringVar(&o.importHollow, "import-hollow", "", "import a hollow-agentOS memory directory into -state first")
	fs.BoolVar(&o.replace, "import-replace", false, "with -import-hollow, replace agents already in -state")
	fs.StringVar(&o.hollowTZ, "hollow-tz", "UTC", "time zone of the hollow-agentOS \"YYYY-MM-DD HH:MM\" timestamps")
	fs.BoolVar(&o.verbose, "v", false, "also log every model call and cycle")
	fs.DurationVar(&o.keepAlive, "keep-alive", -1, "with Ollama, how long the model stays loaded after a call (negative: forever, as the original)")
	fs.BoolVar(&o.fresh, "fresh-on-corrupt", false, "move a corrupt agent state or tasks.json aside (timestamped) and start afresh, instead of stopping")
	fs.Func("task", "assign a task to the first free agent (repeatable)", func(s string) error {
		if strings.TrimSpace(s) == "" {
			return errors.New("empty task")
		}
		o.tasks = append(o.tasks, s)
		return nil
	})
	fs.StringVar(&o.http, "http", "", "serve the monitor (dashboard, API, metrics) on this address, e.g. 127.0.0.1:8080")
	fs.StringVar(&o.httpToken, "http-token", os.Getenv("EXISTENCE_TOKEN"), "bearer token the monitor requires (default $EXISTENCE_TOKEN; empty: none, fit only for loopback)")
	fs.BoolVar(&o.tui, "tui", false, "full-screen terminal view: agent panes, thoughts stream, input line")
	mcpFlags(fs, &o.mcp)
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments: %v", fs.Args())
	}
	if now != "" {
		t, err := time.Parse(time.RFC3339, now)
		if err != nil {
			return nil, fmt.Errorf("-now: %w", err)
		}
		o.now = t
	}
	// An empty -llm-url is resolved by the adapter ($OLLAMA_HOST, else
	// Ollama's default; $OPENAI_BASE_URL). This example is for local
	// servers, so with openai a URL must be given somewhere.
	switch o.provider {
	case "ollama":
		if o.model == "" {
			o.model = defaultOllamaModel
		}
	case "openai":
		if o.llmURL == "" && os.Getenv("OPENAI_BASE_URL") == "" {
			return nil, errors.New("-provider openai needs -llm-url (a base URL ending in /v1) or $OPENAI_BASE_URL")
		}
		if o.model == "" { // issue 15: no Ollama model name sent to another server
			return nil, errors.New("-provider openai needs -model: the name the server serves (GET {base URL}/models lists them)")
		}
	default:
		return nil, fmt.Errorf("-provider %q: want ollama or openai", o.provider)
	}
	if o.heartbeat <= 0 || o.llmTimeout <= 0 {
		return nil, errors.New("-heartbeat and -llm-timeout must be positive")
	}
	if o.cycles < 0 {
		return nil, errors.New("-cycles must be 0 or more")
	}
	return o, nil
}

// logger returns the diagnostics logger: warnings and errors on stderr.
func logger(stderr io.Writer) *slog.Logger {
	return slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
}
