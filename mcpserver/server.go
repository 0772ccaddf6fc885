package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"strings"

	"github.com/existence-loop/sdk/existence"
	"github.com/existence-loop/sdk/existence/event"
	"github.com/existence-loop/sdk/hostaccess"
	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/internal/strictjson"
	"github.com/existence-loop/sdk/task"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Errors of the tools; a tool's error reaches the MCP client as a tool
// error (isError) with this text.
var (
	// ErrNoAgent: no agent has the given id.
	ErrNoAgent = errors.New("no such agent")
	// ErrNotConfigured: the tool needs a part of [Config] that was not
	// given (Tasks, Requests or Events).
	ErrNotConfigured = errors.New("not configured")
	// ErrInvalid: the arguments are unusable (a blank message, a key
	// named twice, ...).
	ErrInvalid = errors.New("invalid arguments")
)

// Limits of the tools' arguments and results.
const (
	// MaxMessageChars is the longest host message send_message accepts,
	// in characters: what the prompt shows of a host message
	// (identity.Limits.HostMessage, 500; spec §2 row 16).
	MaxMessageChars = 500
	// MaxMessageAgents is how many different agent ids one send_message
	// may list: 1,000 (an id listed twice counts once, and is told once).
	// To tell more, list none: the message goes to every agent.
	MaxMessageAgents = 1000
	// RecentGoals is how many of the latest goals agent_state shows.
	RecentGoals = 10
)

// Agents is what the server reads and drives: an *runner.Runner, or one
// agent through [SingleAgent]. It is the monitor's [hostaccess.Agents], so that
// one value serves both.
type Agents = hostaccess.Agents

// SingleAgent exposes one agent as [Agents] ([hostaccess.Single]): a host
// message to another id fails.
func SingleAgent(a *existence.Agent) Agents { return hostaccess.Single(a) }

// Config configures a [Server].
type Config struct {
	// Agents are the agents served (required): an *runner.Runner, or
	// [SingleAgent].
	Agents Agents
	// Tasks is the task queue of assign_task and list_tasks; nil makes
	// those tools fail with [ErrNotConfigured].
	Tasks task.Queue
	// Requests is the queue of the agents' requests to the human, for
	// list_requests, approve_request, reject_request and answer_request;
	// nil makes those tools fail with [ErrNotConfigured].
	Requests Requests
	// Events is the log of recent events behind agent_events; nil makes
	// that tool fail with [ErrNotConfigured].
	Events *EventLog
	// Name and Version identify the server to clients (default
	// "existence-loop", "1").
	Name, Version string
	// Logger receives diagnostics; default slog.Default().
	Logger *slog.Logger
}

// Server is an MCP server over a set of agents: its tools and resources are
// listed in the package documentation. Serve it over stdio with
// [Server.ServeStdio] or over streamable HTTP with [Server.Handler].
type Server struct {
	cfg Config
	mcp *mcp.Server
	// taskTools are the tools whose calls create a task for a client
	// that declares the Tasks extension (tasks.go): assign_task.
	taskTools map[string]taskTool
}

// New returns a Server. It returns an error when cfg.Agents is nil.
func New(cfg Config) (*Server, error) {
	if cfg.Agents == nil {
		return nil, errors.New("mcpserver: Config.Agents is required")
	}
	if cfg.Name == "" {
		cfg.Name = "existence-loop"
	}
	if cfg.Version == "" {
		cfg.Version = "1"
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	s := &Server{cfg: cfg}
	s.taskTools = map[string]taskTool{"assign_task": s.assignTask}
	s.mcp = mcp.NewServer(&mcp.Implementation{Name: cfg.Name, Version: cfg.Version}, &mcp.ServerOptions{
		Instructions: "These tools observe and steer existence-loop agents: autonomous agents that choose their own goals every heartbeat. " +
			"Start with list_agents. Read an agent with agent_state and agent_events; speak to it with send_message; give it work with assign_task; " +
			"answer its requests to its human with list_requests and approve_request, reject_request or answer_request.",
		Logger:       cfg.Logger,
		Capabilities: capabilities(cfg),
	})
	s.mcp.AddReceivingMiddleware(strictArguments, statefulCapabilities)
	s.addTools()
	s.addResources()
	return s, nil
}

// capabilities are the server's declared capabilities beyond those the
// go-sdk infers from the tools and resources: logging (the go-sdk's
// default) and, with a task queue, the Tasks extension ([TasksExtension]),
// which [Server.Handler] serves to 2026-07-28 clients.
func capabilities(cfg Config) *mcp.ServerCapabilities {
	// Setting Capabilities replaces the go-sdk's default, which declares
	// logging: keep declaring it, so that clients see what they saw before.
	//lint:ignore SA1019 logging is deprecated in 2026-07-28 but still served to 2025-11-25 sessions
	c := &mcp.ServerCapabilities{Logging: &mcp.LoggingCapabilities{}}
	if cfg.Tasks != nil {
		c.AddExtension(TasksExtension, nil)
	}
	return c
}

// statefulCapabilities leaves the Tasks extension out of a 2025-11-25
// initialize result: the extension is served to 2026-07-28 clients only
// (the stateful handler has no tasks layer).
func statefulCapabilities(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if r, ok := res.(*mcp.InitializeResult); ok && method == "initialize" && r.Capabilities != nil {
			delete(r.Capabilities.Extensions, TasksExtension) // a copy the go-sdk made for this result
		}
		return res, err
	}
}

// strictArguments refuses a tools/call whose arguments name a key twice,
// at any depth ({"text": "a", "text": "b"}; compared after escapes are
// decoded, encoding/json/v2 semantics): the call ends as a tool error
// (isError) wrapping [ErrInvalid] that names the key, and no tool runs,
// so that no reading of ambiguous arguments reaches an agent. It applies
// to every tool of the server, added ones included, over every transport.
func strictArguments(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if r, ok := req.(*mcp.CallToolRequest); ok && method == "tools/call" && r.Params != nil {
			if err := strictjson.Check(r.Params.Arguments); err != nil {
				res := &mcp.CallToolResult{}
				res.SetError(fmt.Errorf("%s: %w: %v; send each key once", r.Params.Name, ErrInvalid, err))
				return res, nil
			}
		}
		return next(ctx, method, req)
	}
}

// MCP returns the underlying SDK server, to add tools or serve it over
// another transport.
func (s *Server) MCP() *mcp.Server { return s.mcp }

// ServeStdio serves one client over standard input and output until the
// client disconnects or ctx ends. Nothing else may use os.Stdout meanwhile.
// There is no authentication over stdio: see the package documentation.
func (s *Server) ServeStdio(ctx context.Context) error {
	return s.mcp.Run(ctx, &mcp.StdioTransport{})
}

// Serve serves one client over r and w (newline-delimited JSON-RPC, as
// over stdio) until the client disconnects (r ends) or ctx ends. Closing
// is left to the caller.
func (s *Server) Serve(ctx context.Context, r io.Reader, w io.Writer) error {
	return s.mcp.Run(ctx, &mcp.IOTransport{Reader: io.NopCloser(r), Writer: nopWriteCloser{w}})
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// agent returns the agent with id, or an error naming the known ids.
func (s *Server) agent(id string) (*existence.Agent, error) {
	if a := s.cfg.Agents.Agent(id); a != nil {
		return a, nil
	}
	var ids []string
	for _, a := range s.cfg.Agents.Agents() {
		ids = append(ids, a.ID())
	}
	return nil, fmt.Errorf("%w %q; the agents are: %s", ErrNoAgent, id, strings.Join(ids, ", "))
}

// jsonResult is a tool result whose text is v as indented JSON.
func jsonResult(v any) (*mcp.CallToolResult, any, error) {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return nil, nil, err
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}}, nil, nil
}

func textResult(s string) (*mcp.CallToolResult, any, error) {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}, nil, nil
}

// AgentState is the result of agent_state and the content of the
// existence://agents/{id}/state resource: the identity (with only the
// latest goals), the suffering state and the unread messages.
type AgentState struct {
	// Status is the agent's status snapshot (existence.Agent.Status).
	existence.Status
	// Identity is the agent's identity with Goals cut to the latest
	// [RecentGoals].
	Identity identity.Identity `json:"identity"`
	// Suffering is the active stressors and the resolved history.
	Suffering any `json:"suffering"`
	// Inbox and Host are the unread messages.
	InboxMessages []identity.AgentMessage `json:"inbox_messages,omitempty"`
	HostUnread    []identity.AgentMessage `json:"host_messages_unread,omitempty"`
}

func stateOf(a *existence.Agent) AgentState {
	st := a.State()
	id := st.Identity
	if n := len(id.Goals); n > RecentGoals {
		id.Goals = id.Goals[n-RecentGoals:]
	}
	return AgentState{Status: a.Status(), Identity: id, Suffering: st.Suffering, InboxMessages: st.Inbox, HostUnread: st.Host}
}

// Tool arguments. The jsonschema tags are the descriptions clients show.
type (
	agentArgs struct {
		AgentID string `json:"agent_id" jsonschema:"the agent's id, from list_agents"`
	}
	eventsArgs struct {
		AgentID string   `json:"agent_id" jsonschema:"the agent's id, from list_agents"`
		Limit   int      `json:"limit,omitempty" jsonschema:"at most this many of the most recent events (default 50)"`
		Kinds   []string `json:"kinds,omitempty" jsonschema:"only these event kinds, e.g. goal_chosen, goal_ended, worldview_changed, tool_call, stressor_added, message, error"`
	}
	messageArgs struct {
		Text    string   `json:"text" jsonschema:"the message (at most 500 characters); the agents read it as A PERSON SAID"`
		AgentID []string `json:"agent_ids,omitempty" jsonschema:"the agents to tell (at most 1000 different ids; a repeat is told once); empty means every agent"`
	}
	taskArgs struct {
		Description string `json:"description" jsonschema:"what to do"`
		AgentID     string `json:"agent_id,omitempty" jsonschema:"the agent that must do it; empty means the first free agent"`
	}
	tasksArgs struct {
		Status string `json:"status,omitempty" jsonschema:"only tasks with this status: pending, assigned, completed or failed"`
	}
	requestsArgs struct {
		Status  string `json:"status,omitempty" jsonschema:"only requests with this status: pending (the default), approved, rejected, answered, or all"`
		AgentID string `json:"agent_id,omitempty" jsonschema:"only this agent's requests"`
	}
	resolveArgs struct {
		ID   string `json:"id" jsonschema:"the request's id, from list_requests"`
		Text string `json:"text,omitempty" jsonschema:"a note for the agent: the reason for a rejection, or a comment on an approval"`
	}
	answerArgs struct {
		ID     string `json:"id" jsonschema:"the request's id, from list_requests"`
		Answer string `json:"answer" jsonschema:"the answer the agent will read"`
	}
)

// readOnly marks a tool that changes nothing.
var readOnly = &mcp.ToolAnnotations{ReadOnlyHint: true}

func (s *Server) addTools() {
	addTool(s.mcp, &mcp.Tool{Name: "list_agents", Annotations: readOnly,
		Description: "List the agents with their status: active goal, last outcome, suffering load, level and stressors, worldview, unread messages, cycles, model fallbacks (an outage shows here)."},
		func(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			out := []existence.Status{}
			for _, a := range s.cfg.Agents.Agents() {
				out = append(out, a.Status())
			}
			return jsonResult(out)
		})
	addTool(s.mcp, &mcp.Tool{Name: "agent_state", Annotations: readOnly,
		Description: "Read one agent's state: identity (worldview, opinions, open questions, narrative, discoveries, latest goals), suffering (active and resolved stressors) and unread messages."},
		func(ctx context.Context, _ *mcp.CallToolRequest, in agentArgs) (*mcp.CallToolResult, any, error) {
			a, err := s.agent(in.AgentID)
			if err != nil {
				return nil, nil, err
			}
			return jsonResult(stateOf(a))
		})
	addTool(s.mcp, &mcp.Tool{Name: "agent_suffering", Annotations: readOnly,
		Description: "Read one agent's suffering: its load (0–1), level, active stressors with severity and resolution condition, and resolved ones."},
		func(ctx context.Context, _ *mcp.CallToolRequest, in agentArgs) (*mcp.CallToolResult, any, error) {
			a, err := s.agent(in.AgentID)
			if err != nil {
				return nil, nil, err
			}
			st := a.State()
			return jsonResult(map[string]any{
				"load": st.Suffering.Load(), "level": st.Suffering.Level().String(),
				"active": st.Suffering.Active, "resolved": st.Suffering.Resolved,
				"crisis_cycles": st.Suffering.CrisisCycles,
			})
		})
	addTool(s.mcp, &mcp.Tool{Name: "agent_events", Annotations: readOnly,
		Description: "Read one agent's recent thoughts and actions (events), oldest first: goals chosen with their reasoning, goals ended, worldview changes, stressors, tool calls, messages, errors."},
		func(ctx context.Context, _ *mcp.CallToolRequest, in eventsArgs) (*mcp.CallToolResult, any, error) {
			if s.cfg.Events == nil {
				return nil, nil, fmt.Errorf("agent_events: %w: the server has no event log", ErrNotConfigured)
			}
			if _, err := s.agent(in.AgentID); err != nil {
				return nil, nil, err
			}
			limit := in.Limit
			if limit <= 0 {
				limit = 50
			}
			var kinds []event.Kind
			for _, k := range in.Kinds {
				kinds = append(kinds, event.Kind(k))
			}
			evs := s.cfg.Events.Recent(in.AgentID, limit, kinds...)
			if evs == nil {
				evs = []event.Event{}
			}
			return jsonResult(evs)
		})
	addTool(s.mcp, &mcp.Tool{Name: "send_message",
		Description: "Send a host message (A PERSON SAID) to every agent, or to the listed ones. It interrupts the goal each is pursuing; they answer at their next existence cycle."},
		func(ctx context.Context, _ *mcp.CallToolRequest, in messageArgs) (*mcp.CallToolResult, any, error) {
			text := strings.TrimSpace(in.Text)
			if text == "" {
				return nil, nil, fmt.Errorf("%w: empty message", ErrInvalid)
			}
			if n := len([]rune(text)); n > MaxMessageChars {
				return nil, nil, fmt.Errorf("%w: the message has %d characters, the limit is %d", ErrInvalid, n, MaxMessageChars)
			}
			ids, err := distinctAgents(in.AgentID)
			if err != nil {
				return nil, nil, err
			}
			for _, id := range ids {
				if _, err := s.agent(id); err != nil {
					return nil, nil, err
				}
			}
			if err := s.cfg.Agents.SayAsHost(ctx, text, ids...); err != nil {
				return nil, nil, err
			}
			to := "every agent"
			if len(ids) > 0 {
				to = strings.Join(ids, ", ")
			}
			return textResult("delivered to " + to)
		})
	addTool(s.mcp, &mcp.Tool{Name: "assign_task",
		Description: "Assign a task: to one agent, or to the first free agent. The agent sees it as ASSIGNED TASK at its next existence cycle."},
		func(ctx context.Context, _ *mcp.CallToolRequest, in taskArgs) (*mcp.CallToolResult, any, error) {
			if s.cfg.Tasks == nil {
				return nil, nil, fmt.Errorf("assign_task: %w: the server has no task queue", ErrNotConfigured)
			}
			if in.AgentID != "" {
				if _, err := s.agent(in.AgentID); err != nil {
					return nil, nil, err
				}
			}
			t, err := s.cfg.Tasks.Submit(ctx, in.Description, in.AgentID)
			if err != nil {
				return nil, nil, err
			}
			return jsonResult(t)
		})
	addTool(s.mcp, &mcp.Tool{Name: "list_tasks", Annotations: readOnly,
		Description: "Read the task queue: every task with its status (pending, assigned, completed, failed), agent and result."},
		func(ctx context.Context, _ *mcp.CallToolRequest, in tasksArgs) (*mcp.CallToolResult, any, error) {
			if s.cfg.Tasks == nil {
				return nil, nil, fmt.Errorf("list_tasks: %w: the server has no task queue", ErrNotConfigured)
			}
			ts, err := s.cfg.Tasks.List(ctx)
			if err != nil {
				return nil, nil, err
			}
			out := []task.Task{}
			for _, t := range ts {
				if in.Status == "" || string(t.Status) == in.Status {
					out = append(out, t)
				}
			}
			return jsonResult(out)
		})
	s.addRequestTools()
	s.addSlotTools()
}

// agentURI is the URI of an agent's state document.
func agentURI(id string) string { return "existence://agents/" + url.PathEscape(id) + "/state" }

func (s *Server) addResources() {
	read := func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		uri := req.Params.URI
		rest, ok := strings.CutPrefix(uri, "existence://agents/")
		id, ok2 := strings.CutSuffix(rest, "/state")
		if !ok || !ok2 {
			return nil, mcp.ResourceNotFoundError(uri)
		}
		id, err := url.PathUnescape(id)
		if err != nil {
			return nil, mcp.ResourceNotFoundError(uri)
		}
		a := s.cfg.Agents.Agent(id)
		if a == nil {
			return nil, mcp.ResourceNotFoundError(uri)
		}
		b, err := json.MarshalIndent(stateOf(a), "", "  ")
		if err != nil {
			return nil, err
		}
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: "application/json", Text: string(b)}}}, nil
	}
	for _, a := range s.cfg.Agents.Agents() {
		s.mcp.AddResource(&mcp.Resource{
			URI: agentURI(a.ID()), Name: a.ID() + "-state", Title: a.Name() + "'s state",
			Description: "The state document of agent " + a.ID() + " (" + a.Name() + "): identity, latest goals, suffering, unread messages.",
			MIMEType:    "application/json",
		}, read)
	}
	s.mcp.AddResourceTemplate(&mcp.ResourceTemplate{
		URITemplate: "existence://agents/{id}/state", Name: "agent-state",
		Description: "The state document of the agent with the given id.", MIMEType: "application/json",
	}, read)
}

// distinctAgents returns ids without repeats, in their first order, or an
// [ErrInvalid] error when more than [MaxMessageAgents] remain.
func distinctAgents(ids []string) ([]string, error) {
	seen := make(map[string]bool, min(len(ids), MaxMessageAgents+1))
	var out []string
	for _, id := range ids {
		if seen[id] {
			continue
		}
		if len(out) == MaxMessageAgents {
			return nil, fmt.Errorf("%w: more than %d different agent ids; to tell every agent, leave agent_ids out", ErrInvalid, MaxMessageAgents)
		}
		seen[id] = true
		out = append(out, id)
	}
	return out, nil
}
