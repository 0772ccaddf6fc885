package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/existence-loop/sdk/existence"
	"github.com/existence-loop/sdk/existence/event"
	"github.com/existence-loop/sdk/existence/requests"
	"github.com/existence-loop/sdk/existence/toolloop"
	"github.com/existence-loop/sdk/existence/workspace"
	"github.com/existence-loop/sdk/hostaccess"
	"github.com/existence-loop/sdk/llm"
	"github.com/existence-loop/sdk/llm/ollama"
	"github.com/existence-loop/sdk/llm/openai"
	"github.com/existence-loop/sdk/monitor"
	"github.com/existence-loop/sdk/prompt"
	"github.com/existence-loop/sdk/store/filestore"
	"github.com/existence-loop/sdk/store/taskqueue"
)

// shutdownTimeout bounds the HTTP server's graceful shutdown.
const shutdownTimeout = 10 * time.Second

// worldText is the agent's world context (spec §2 row 3, §7): the world it
// really runs in, identical every cycle.
func worldText(workspaceDir string) string {
	return strings.Join([]string{
		"You are running as a Go program on a real computer, embedded in an HTTP service (the existence-loop SDK's embed example).",
		"Your world is one workspace directory: " + workspaceDir + ". Every path you use is relative to it.",
		"Your tools are read_file, write_file, append_file, list_files and delete_file. They work only inside the workspace.",
		"There is no network, no shell and no code execution: what you make is text files — notes, designs, data, code for a person to read.",
		"There is no hardware layer accessible to you — no thermal sensors, no PMIC, no CPU registers, no bus arbiter.",
		"People reach you through the service: a task they assign appears as ASSIGNED TASK, a message they send as A PERSON SAID. Your goals are streamed to them as you choose them.",
	}, "\n")
}

// embedGoals are the ranked goals of the directive (spec §7, adapted to the
// agent's real world).
var embedGoals = []string{
	"Do what a person asked, if anything: an assigned task or a message",
	"Read real files in the workspace (list_files, read_file) and improve on what is there",
	"Write a new, useful file — a note, a dataset, a tool written as code",
	"Write a design spec for something a person could build",
	"Finish or fix something you left incomplete",
}

const embedProhibitions = "goals referencing hardware, thermal sensors, PMIC, bus arbiters, the network, or tools you do not have"

// serve wires the SDK together, serves the HTTP API on o.addr and runs the
// agent until ctx ends; then it shuts the server down gracefully, stops the
// agent and saves its state.
func serve(ctx context.Context, o *options, stdout, stderr io.Writer) (err error) {
	log := logger(stderr)
	st, err := openState(o.state)
	if err != nil {
		return err
	}
	ws, err := workspace.Open(o.workspace, workspace.Limits{})
	if err != nil {
		return err
	}
	defer ws.Close()
	agent, err := newAgent(ctx, o, st, ws, log, stdout)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := agent.Close(); cerr != nil {
			err = errors.Join(err, fmt.Errorf("closing the agent: %w", cerr))
		}
	}()
	m, err := monitor.New(monitor.Config{
		Runner:   hostaccess.Single(agent),
		Tasks:    st.tasks,
		Requests: st.reqs,
		Token:    o.token,
		Addr:     o.addr, // a public address without a token is refused: monitor.ErrNoToken
		Logger:   log,
	})
	if errors.Is(err, monitor.ErrNoToken) {
		return fmt.Errorf("-http %s is not a loopback address: set -http-token (or $EXISTENCE_TOKEN), or listen on 127.0.0.1", o.addr)
	} else if err != nil {
		return err
	}
	defer agent.Subscribe(m.Observe)() // the monitor exists after the agent: it subscribes
	return runAgent(ctx, agent, m, o, log, stderr)
}

// state is what the example keeps in its state directory: the agent's
// state, the task queue and the requests to the human.
type state struct {
	store *filestore.Store
	tasks *taskqueue.Queue
	reqs  *requests.Queue
}

func openState(dir string) (*state, error) {
	store, err := filestore.Open(dir, filestore.Options{})
	if err != nil {
		return nil, err
	}
	tasks, err := taskqueue.Open(dir, taskqueue.Options{})
	if err != nil {
		return nil, err
	}
	reqs, err := requests.Open(dir, requests.Options{})
	if err != nil {
		return nil, err
	}
	return &state{store: store, tasks: tasks, reqs: reqs}, nil
}

// newAgent builds the agent: the model of -provider, the workspace tools
// and the requests tools in a tool-loop executor, and a one-agent prompt
// of the agent's real world.
func newAgent(ctx context.Context, o *options, st *state, ws *workspace.Workspace, log *slog.Logger, stdout io.Writer) (*existence.Agent, error) {
	base, url, err := newModel(o)
	if err != nil {
		return nil, err
	}
	o.llmURL = url
	world := worldText(filepath.ToSlash(filepath.Clean(o.workspace)) + "/")
	exec, err := toolloop.New(toolloop.Config{
		// No Model: the executor uses the agent's, wrapped with its
		// timeout, retry and per-attempt events.
		Tools:       append(ws.Tools(), requests.Tools(st.reqs)...),
		ToolTimeout: time.Minute,
		World:       world,
	})
	if err != nil {
		return nil, err
	}
	out := &printer{w: stdout, verbose: o.verbose}
	return existence.New(ctx, existence.Config{
		ID: o.id, Name: o.name, Model: base, Store: st.store, Executor: exec, Tasks: st.tasks,
		Traits:  []string{"helpful", "curious", "finishes what it starts"},
		Domains: []string{"writing", "building"},
		Prompt: prompt.Solo(prompt.Config{ // one agent: no peers section, no "peers who exist alongside you"
			World:        world,
			Goals:        embedGoals,
			Prohibitions: embedProhibitions,
			Grounding:    "The goal must be grounded in what actually exists in the workspace.",
		}),
		Timing: existence.TimingConfig{Heartbeat: o.heartbeat, CallTimeout: o.llmTimeout}, Observer: out.observe, Logger: log,
	})
}

// runAgent serves m on o.addr (monitor.Serve owns the listener and the
// graceful shutdown) and runs the agent once listening, until ctx ends or
// the agent stops; then it stops both and reports what went wrong.
func runAgent(ctx context.Context, agent *existence.Agent, m *monitor.Monitor, o *options, log *slog.Logger, stderr io.Writer) error {
	ctx, stopServing := context.WithCancel(ctx)
	defer stopServing()
	agentCtx, stopAgent := context.WithCancel(context.WithoutCancel(ctx))
	defer stopAgent()
	var unexpected atomic.Bool
	agentDone := make(chan error, 1)
	started := false // set by ready, which Serve calls before it returns
	ready := func(addr net.Addr) {
		started = true
		fmt.Fprintf(stderr, "embed: %s (%s) listening on http://%s; %s at %s, model %s; state in %s, workspace %s; Ctrl-C to stop\n",
			agent.Name(), agent.ID(), addr, o.provider, o.llmURL, o.model, o.state, o.workspace)
		fmt.Fprintf(stderr, "embed: dashboard at http://%s/ (open it with ?token=TOKEN when a token is set); waiting for the model at %s…\n", addr, o.llmURL)
		go func() {
			err := agent.Run(agentCtx)
			unexpected.Store(ctx.Err() == nil)
			agentDone <- err
			stopServing()
		}()
	}
	runErr := monitor.Serve(ctx, o.addr, m, monitor.ServeConfig{Ready: ready, ShutdownTimeout: shutdownTimeout, Logger: log})
	if !started {
		return runErr // could not listen: the agent never ran
	}
	fmt.Fprintln(stderr, "embed: shutting down")
	stopAgent()
	if agentErr := <-agentDone; agentErr != nil {
		runErr = errors.Join(runErr, fmt.Errorf("stopping the agent: %w", agentErr))
	}
	if unexpected.Load() {
		runErr = errors.Join(errors.New("the agent stopped unexpectedly"), runErr)
	}
	return runErr
}

// newModel builds the provider adapter and returns it with the server URL
// it resolved (from -llm-url, else the provider's environment variable and
// default).
func newModel(o *options) (llm.Model, string, error) {
	if o.provider == "openai" {
		m, err := openai.New(openai.Config{BaseURL: o.llmURL, Model: o.model})
		if err != nil {
			return nil, "", err
		}
		return m, m.BaseURL(), nil
	}
	m, err := ollama.New(ollama.Config{URL: o.llmURL, Model: o.model})
	if err != nil {
		return nil, "", err
	}
	return m, m.URL(), nil
}

// printer writes the thoughts log (one [event.Event.String] line per
// event) to w. Without verbose it skips cycle statistics and successful
// model calls.
type printer struct {
	w       io.Writer
	verbose bool
	mu      sync.Mutex
}

func (p *printer) observe(e event.Event) {
	if !p.verbose {
		switch e.Kind {
		case event.Cycle:
			return
		case event.ModelCall:
			if e.Call != nil && e.Call.Outcome == "ok" {
				return
			}
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintln(p.w, e.String())
}
