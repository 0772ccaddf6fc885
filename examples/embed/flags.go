package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"strings"
	"time"

	"github.com/existence-loop/sdk/identity"
)

// options are the command's flags.
type options struct {
	addr       string
	provider   string
	llmURL     string
	model      string
	llmTimeout time.Duration
	state      string
	workspace  string
	heartbeat  time.Duration
	token      string
	id         string
	name       string
	verbose    bool
}

// oldFlagNames maps each flag's old name to the name the existence
// commands share (-http, -store, -http-token); the old names are accepted
// until the next release.
var oldFlagNames = map[string]string{"addr": "http", "state": "store", "token": "http-token"}

// parseFlags parses args. Unset -llm-url and -http-token take their values from
// the environment ($OLLAMA_HOST or $OPENAI_BASE_URL, $EXISTENCE_TOKEN); an
// explicit -http-token= turns authentication off even when $EXISTENCE_TOKEN is
// set. The error is flag.ErrHelp for -h.
func parseFlags(args []string, stderr io.Writer) (*options, error) {
	fs := flag.NewFlagSet("embed", flag.ContinueOnError)
	fs.SetOutput(stderr)
	o := &options{}
	fs.StringVar(&o.addr, "http", "127.0.0.1:8080", "HTTP listen address (host:port)")
	fs.StringVar(&o.provider, "provider", "ollama", "model provider: ollama or openai (any OpenAI-compatible server)")
	fs.StringVar(&o.llmURL, "llm-url", "", "server URL (default $OLLAMA_HOST, else http://127.0.0.1:11434; with -provider openai, a base URL ending in /v1, default $OPENAI_BASE_URL)")
	fs.StringVar(&o.model, "model", "qwen3.5:9b", "model name")
	fs.DurationVar(&o.llmTimeout, "llm-timeout", 180*time.Second, "timeout of one model call")
	fs.StringVar(&o.state, "store", "./embed-state", "state directory (identity, suffering, messages, task queue)")
	fs.StringVar(&o.workspace, "workspace", "./embed-workspace", "the agent's workspace directory (its file tools are confined to it)")
	fs.DurationVar(&o.heartbeat, "heartbeat", 6*time.Second, "tick interval")
	fs.StringVar(&o.token, "http-token", "", "bearer token every request must carry (default $EXISTENCE_TOKEN; empty: no authentication)")
	fs.StringVar(&o.id, "id", "agent", "agent id: 1–64 lower-case letters, digits, '_' and '-'")
	fs.StringVar(&o.name, "name", "Wren", "agent display name (for a new identity)")
	fs.BoolVar(&o.verbose, "v", false, "also log every model call and cycle")
	// The names existence's commands share replaced -addr, -state and
	// -token; the old names still set the same values for one release.
	for old, name := range oldFlagNames {
		fs.Var(fs.Lookup(name).Value, old, "deprecated: use -"+name)
	}
	fs.Usage = func() {
		// -h lists the current names only.
		vis := flag.NewFlagSet("embed", flag.ContinueOnError)
		vis.SetOutput(stderr)
		fs.VisitAll(func(f *flag.Flag) {
			if _, old := oldFlagNames[f.Name]; !old {
				vis.Var(f.Value, f.Name, f.Usage)
				vis.Lookup(f.Name).DefValue = f.DefValue
			}
		})
		fmt.Fprintln(stderr, "Usage of embed:")
		vis.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments: %v", fs.Args())
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) {
		if name, ok := oldFlagNames[f.Name]; ok {
			set[name] = true
			return
		}
		set[f.Name] = true
	})

	// An empty -llm-url is resolved by the adapter ($OLLAMA_HOST, else
	// Ollama's default; $OPENAI_BASE_URL). This example is for local
	// servers, so with openai a URL must be given somewhere.
	switch o.provider {
	case "ollama":
	case "openai":
		if o.llmURL == "" && os.Getenv("OPENAI_BASE_URL") == "" {
			return nil, errors.New("-provider openai needs -llm-url (a base URL ending in /v1) or $OPENAI_BASE_URL")
		}
	default:
		return nil, fmt.Errorf("-provider %q: want ollama or openai", o.provider)
	}
	if !set["http-token"] {
		o.token = os.Getenv("EXISTENCE_TOKEN")
	}
	if strings.ContainsFunc(o.token, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
		return nil, errors.New("-http-token (or $EXISTENCE_TOKEN) must not contain white space or control characters")
	}
	if _, _, err := net.SplitHostPort(o.addr); err != nil {
		return nil, fmt.Errorf("-http %q: %w", o.addr, err)
	}
	if o.heartbeat <= 0 || o.llmTimeout <= 0 {
		return nil, errors.New("-heartbeat and -llm-timeout must be positive")
	}
	if err := identity.ValidateID(o.id); err != nil {
		return nil, fmt.Errorf("-id: %w", err)
	}
	if strings.TrimSpace(o.name) == "" {
		return nil, errors.New("-name must not be blank")
	}
	if o.state == "" || o.workspace == "" {
		return nil, errors.New("-store and -workspace must not be empty")
	}
	return o, nil
}

// logger returns the diagnostics logger: warnings and errors on stderr.
func logger(stderr io.Writer) *slog.Logger {
	return slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
}
