package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"strings"
	"time"

	"github.com/existence-loop/sdk/cmd/internal/storespec"
	"github.com/existence-loop/sdk/existence/requests"
	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/memory"
	"github.com/existence-loop/sdk/monitor"
)

// serveCommand is `existence serve`.
var serveCommand = &command{
	name:    "serve",
	summary: "serve the monitor (dashboard, API, events, metrics) over a store, for agents that run in other processes",
	about: `It runs no agent and takes no lock: every -refresh it loads every agent's
state from -store (run's -store: a directory, sqlite:PATH or
postgres://...) and serves it read-only through the monitor: the web
dashboard, the JSON API under /api/, server-sent events at /api/events and
Prometheus metrics at /metrics. Use it to watch agents running elsewhere:
several run or swarm processes on one PostgreSQL database, or a trio's
state directory.

  {prog}                                            the trio of ./trio-state
  {prog} -store postgres://localhost/swarm -http 127.0.0.1:9090

The events it streams are derived from what changed between two loads:
goals chosen and ended, worldviews changed. A task (POST /api/tasks) goes
to the store's task queue, where the running agents take it; an answer to
a request is stored in the store's request queue. A host message (POST
/api/messages) and an answer's note reach the agents only through a
PostgreSQL store, whose running processes deliver them; other stores
refuse messages with 501 and say why.`,
	setup: func(fs *flag.FlagSet) action {
		o := &serveOptions{}
		o.flags(fs)
		return func(ctx context.Context, e *env, _ []string) error {
			if err := o.check(); err != nil {
				return usageErr(err)
			}
			return serve(ctx, o, e)
		}
	},
}

// serveOptions are the serve command's flags.
type serveOptions struct {
	store   string
	http    string
	token   envToken
	optOut  bool // -http-no-token-behind-proxy
	refresh time.Duration
	kind    string

	// embed names the embedder of the memory endpoint's recalls.
	embed embedOptions

	// ready, when set, is called with the monitor's URL once it serves
	// (tests).
	ready func(url string)
}

// flags registers the serve command's flags on fs.
func (o *serveOptions) flags(fs *flag.FlagSet) {
	fs.StringVar(&o.store, "store", "./trio-state", "the agents' store: a directory, sqlite:PATH or postgres://... (run's -store)")
	fs.StringVar(&o.http, "http", "127.0.0.1:8080", "serve the monitor on this address")
	tokenFlag(fs, &o.token, "bearer token the monitor requires (default $EXISTENCE_TOKEN; empty: none, fit only for loopback)")
	exposureFlags(fs, &o.optOut)
	fs.DurationVar(&o.refresh, "refresh", 2*time.Second, "how often every agent's state is loaded from the store")
	o.embed.flags(fs)
}

// check validates the parsed flags.
func (o *serveOptions) check() error {
	kind, err := storespec.Kind(o.store)
	if err != nil {
		return fmt.Errorf("-store: %w", err)
	}
	o.kind = kind
	o.token.resolve()
	if err := checkExposure(o.http, o.token.String(), o.optOut); err != nil {
		return err
	}
	if o.refresh <= 0 {
		return errors.New("-refresh must be positive")
	}
	if _, _, err := net.SplitHostPort(o.http); err != nil {
		return fmt.Errorf("-http %q: %w", o.http, err)
	}
	return o.embed.check()
}

// serve serves the monitor over the store until ctx ends.
func serve(ctx context.Context, o *serveOptions, e *env) error {
	log := logger(e.stderr)
	if o.kind == "dir" || o.kind == "sqlite" {
		// Watching creates nothing: a mistyped path is an error, not an
		// empty store.
		path := strings.TrimPrefix(o.store, "sqlite:")
		if _, err := os.Stat(path); err != nil {
			return fmt.Errorf("-store %s: %w (nothing to watch: give the store the agents run on)", o.store, err)
		}
	}
	store, tasks, closer, err := storespec.Open(ctx, o.store, storespec.Options{Logger: log})
	if err != nil {
		return err
	}
	defer closer.Close()
	reqs, err := openStoreRequests(ctx, o.store, o.kind, store)
	if err != nil {
		return err
	}
	src := newStoreSource(store, o.kind, log)
	if err := src.refresh(ctx); err != nil {
		return err
	}
	tok := o.token.String()
	// The agents' long-term memories, read from the store: the memory
	// endpoint recalls with -embed-model (peeking: it never writes).
	var mem *memory.Memory
	if ms, ok := storespec.Memories(store); ok {
		emb, _, err := o.embed.embedder()
		if err != nil {
			return err
		}
		if mem, err = memory.New(memory.Config{Store: ms, Embedder: emb, NoBackfill: true, Logger: log}); err != nil {
			return err
		}
		defer mem.Close()
	}
	mon, err := monitor.New(monitor.Config{Source: src, Tasks: tasks, Requests: reqs, Memory: mem, Token: tok, Logger: log,
		Addr: o.http, InsecureNoTokenBehindProxy: o.optOut})
	if err != nil {
		return err
	}
	src.observe = mon.Observe
	base, stop, err := listenMonitor(mon, mon, o.http, o.token, e.prog, log, e.stderr)
	if err != nil {
		return err
	}
	defer stop()
	statuses, _ := src.Statuses(ctx)
	fmt.Fprintf(e.stderr, "%s: watching %s (%d agents), loading every state every %v; read-only, no lock taken; Ctrl-C to stop\n", e.prog, o.store, len(statuses), o.refresh)
	if o.ready != nil {
		o.ready(base)
	}
	tick := time.NewTicker(o.refresh)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
			if err := src.refresh(ctx); err != nil && ctx.Err() == nil {
				log.Warn("serve: refreshing failed; showing the last statuses", "err", err)
			}
		}
	}
}

// openStoreRequests opens the request queue kept with the store's tasks,
// as run does: the documents table of a database store, else
// requests.json in the directory.
func openStoreRequests(ctx context.Context, spec, kind string, store identity.Store) (*requests.Queue, error) {
	if q, ok, err := storespec.OpenRequests(ctx, store, requests.Options{}); ok {
		return q, err
	}
	if kind != "dir" {
		return nil, fmt.Errorf("%s: no request queue for a %T", spec, store)
	}
	return requests.Open(spec, requests.Options{})
}
