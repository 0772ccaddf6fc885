package a2aserver

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"

	"github.com/existence-loop/sdk/existence"
	"github.com/existence-loop/sdk/existence/event"
	"github.com/existence-loop/sdk/prompt"
	"github.com/existence-loop/sdk/task"
)

// handler implements a2asrv.RequestHandler over the task queue.
type handler struct{ s *Server }

var _ a2asrv.RequestHandler = (*handler)(nil)

// agent returns the agent a request's tenant names: the agent with that
// id, or, for an empty tenant, the only agent. The error says which
// agents there are (at most 20 named).
func (h *handler) agent(tenant string) (*existence.Agent, error) {
	if tenant == "" {
		if agents := h.s.cfg.Agents.Agents(); len(agents) == 1 {
			return agents[0], nil
		}
		return nil, a2a.NewError(a2a.ErrInvalidParams, "no agent chosen: these agents are served, name one as the request's tenant (its id): "+h.ids())
	}
	if a := h.s.cfg.Agents.Agent(tenant); a != nil {
		return a, nil
	}
	return nil, a2a.NewError(a2a.ErrInvalidParams, "no agent "+quote(tenant)+" is served here; the agents are: "+h.ids())
}

func (h *handler) ids() string {
	agents := h.s.cfg.Agents.Agents()
	var ids []string
	for i, a := range agents {
		if i == 20 {
			ids = append(ids, fmt.Sprintf("and %d more", len(agents)-20))
			break
		}
		ids = append(ids, a.ID())
	}
	return strings.Join(ids, ", ")
}

// ownTask returns the queue's task id when it belongs to agent a; another
// agent's task is answered as not found, so that tenants cannot read one
// another's tasks.
func (h *handler) ownTask(ctx context.Context, a *existence.Agent, id a2a.TaskID) (task.Task, error) {
	t, err := h.s.cfg.Tasks.Get(ctx, string(id))
	if errors.Is(err, task.ErrNotFound) {
		return task.Task{}, a2a.NewError(a2a.ErrTaskNotFound, "no task "+quote(string(id))+" for agent "+a.ID())
	}
	if err != nil {
		return task.Task{}, err
	}
	if t.Agent != a.ID() && (t.Agent != "" || t.AssignedTo != a.ID()) {
		return task.Task{}, a2a.NewError(a2a.ErrTaskNotFound, "no task "+quote(string(id))+" for agent "+a.ID())
	}
	return t, nil
}

// messageText returns a message's text, checked and cleaned: the text
// parts joined by newlines, through prompt.Clean (the unsafe-character
// rule), trimmed; non-text parts, a blank text and a text longer than
// MaxMessageChars are refused with ErrInvalidParams.
func (h *handler) messageText(m *a2a.Message) (string, error) {
	if m == nil {
		return "", a2a.NewError(a2a.ErrInvalidParams, "the request has no message")
	}
	if m.TaskID != "" {
		return "", a2a.NewError(a2a.ErrUnsupportedOperation, "a message to an existing task ("+quote(string(m.TaskID))+") is not supported: existence tasks take no further input; send a new message without taskId")
	}
	var parts []string
	for i, p := range m.Parts {
		if p == nil {
			continue
		}
		t, ok := p.Content.(a2a.Text)
		if !ok {
			return "", a2a.NewError(a2a.ErrUnsupportedContentType, fmt.Sprintf("part %d of the message is not text: the agents read text parts only", i))
		}
		parts = append(parts, string(t))
	}
	text := strings.TrimSpace(prompt.Clean(strings.Join(parts, "\n")))
	if text == "" {
		return "", a2a.NewError(a2a.ErrInvalidParams, "the message has no text")
	}
	if n := utf8.RuneCountInString(text); n > h.s.cfg.MaxMessageChars {
		return "", a2a.NewError(a2a.ErrInvalidParams, fmt.Sprintf("the message has %d characters, the limit is %d", n, h.s.cfg.MaxMessageChars))
	}
	return text, nil
}

// submit puts the message of req into its agent's queue.
func (h *handler) submit(ctx context.Context, req *a2a.SendMessageRequest) (*existence.Agent, task.Task, error) {
	a, err := h.agent(req.Tenant)
	if err != nil {
		return nil, task.Task{}, err
	}
	text, err := h.messageText(req.Message)
	if err != nil {
		return nil, task.Task{}, err
	}
	t, err := h.s.cfg.Tasks.Submit(ctx, text, a.ID())
	if errors.Is(err, task.ErrFull) {
		return nil, task.Task{}, a2a.NewError(a2a.ErrServerError, "the task queue is full; try again when tasks have ended")
	}
	if err != nil {
		return nil, task.Task{}, err
	}
	h.s.cfg.Logger.Debug("a2a: task submitted", "agent", a.ID(), "task", t.ID)
	return a, t, nil
}

// SendMessage queues the message as a task and returns it, submitted.
func (h *handler) SendMessage(ctx context.Context, req *a2a.SendMessageRequest) (a2a.SendMessageResult, error) {
	a, t, err := h.submit(ctx, req)
	if err != nil {
		return nil, err
	}
	return toA2A(a, t, historyOf(req.Config)), nil
}

// SendStreamingMessage queues the message and streams the task: the task,
// then a status update at each change, the artifacts and the final
// status.
func (h *handler) SendStreamingMessage(ctx context.Context, req *a2a.SendMessageRequest) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		a, t, err := h.submit(ctx, req)
		if err != nil {
			yield(nil, err)
			return
		}
		h.follow(ctx, a, t, yield)
	}
}

// SubscribeToTask streams an agent's task from its present state.
func (h *handler) SubscribeToTask(ctx context.Context, req *a2a.SubscribeToTaskRequest) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		a, err := h.agent(req.Tenant)
		if err != nil {
			yield(nil, err)
			return
		}
		t, err := h.ownTask(ctx, a, req.ID)
		if err != nil {
			yield(nil, err)
			return
		}
		if t.Status.Ended() {
			yield(nil, a2a.NewError(a2a.ErrUnsupportedOperation, "task "+t.ID+" has ended ("+string(stateOf(t))+"); read it with GetTask"))
			return
		}
		h.follow(ctx, a, t, yield)
	}
}

// follow yields t as a Task, then a status update whenever its status
// changes, woken by the agent's events and every PollInterval, and at
// the end its artifacts and final status. It returns when the task ends,
// ctx ends or the client stops reading.
func (h *handler) follow(ctx context.Context, a *existence.Agent, t task.Task, yield func(a2a.Event, error) bool) {
	// Subscribe before the first event goes out, and read the task
	// before each wait: no change between the two is missed.
	wake := make(chan struct{}, 1)
	cancel := a.Subscribe(func(e event.Event) {
		if e.Kind == event.Task || e.Kind == event.GoalChosen || e.Kind == event.GoalEnded {
			select {
			case wake <- struct{}{}:
			default:
			}
		}
	})
	defer cancel()
	if !yield(toA2A(a, t, nil), nil) {
		return
	}
	tick := time.NewTicker(h.s.cfg.PollInterval)
	defer tick.Stop()
	last := t.Status
	for !last.Ended() {
		cur, err := h.s.cfg.Tasks.Get(ctx, t.ID)
		if err != nil {
			yield(nil, err)
			return
		}
		if cur.Status != last {
			last = cur.Status
			full := toA2A(a, cur, nil)
			if cur.Status.Ended() {
				for _, art := range full.Artifacts {
					if !yield(&a2a.TaskArtifactUpdateEvent{TaskID: full.ID, ContextID: full.ContextID, Artifact: art, LastChunk: true}, nil) {
						return
					}
				}
			}
			if !yield(&a2a.TaskStatusUpdateEvent{TaskID: full.ID, ContextID: full.ContextID, Status: full.Status}, nil) {
				return
			}
			continue
		}
		select {
		case <-ctx.Done():
			return
		case <-wake:
		case <-tick.C:
		}
	}
}

// GetTask returns an agent's task.
func (h *handler) GetTask(ctx context.Context, req *a2a.GetTaskRequest) (*a2a.Task, error) {
	a, err := h.agent(req.Tenant)
	if err != nil {
		return nil, err
	}
	t, err := h.ownTask(ctx, a, req.ID)
	if err != nil {
		return nil, err
	}
	return toA2A(a, t, req.HistoryLength), nil
}

// ListTasks returns an agent's tasks, newest first, filtered by state and
// context, in pages of PageSize (default [DefaultPageSize], at most
// [MaxPageSize]); the page token is the offset of the page.
func (h *handler) ListTasks(ctx context.Context, req *a2a.ListTasksRequest) (*a2a.ListTasksResponse, error) {
	a, err := h.agent(req.Tenant)
	if err != nil {
		return nil, err
	}
	size := req.PageSize
	if size <= 0 {
		size = DefaultPageSize
	}
	if size > MaxPageSize {
		return nil, a2a.NewError(a2a.ErrInvalidParams, fmt.Sprintf("pageSize %d is above the limit of %d", size, MaxPageSize))
	}
	offset := 0
	if req.PageToken != "" {
		offset, err = strconv.Atoi(req.PageToken)
		if err != nil || offset < 0 {
			return nil, a2a.NewError(a2a.ErrInvalidParams, "invalid pageToken "+quote(req.PageToken)+": pass the nextPageToken of the previous page")
		}
	}
	all, err := h.s.cfg.Tasks.List(ctx)
	if err != nil {
		return nil, err
	}
	var mine []*a2a.Task
	for _, t := range slices.Backward(all) {
		if t.Agent != a.ID() && (t.Agent != "" || t.AssignedTo != a.ID()) {
			continue
		}
		at := convert(a, t, req.HistoryLength, req.IncludeArtifacts)
		if req.Status != "" && at.Status.State != req.Status {
			continue
		}
		if req.ContextID != "" && at.ContextID != req.ContextID {
			continue
		}
		if req.StatusTimestampAfter != nil && at.Status.Timestamp != nil && !at.Status.Timestamp.After(*req.StatusTimestampAfter) {
			continue
		}
		mine = append(mine, at)
	}
	resp := &a2a.ListTasksResponse{Tasks: []*a2a.Task{}, TotalSize: len(mine), PageSize: size}
	if offset < len(mine) {
		end := min(offset+size, len(mine))
		resp.Tasks = mine[offset:end]
		if end < len(mine) {
			resp.NextPageToken = strconv.Itoa(end)
		}
	}
	return resp, nil
}

// CancelTask ends an agent's task with task.Cancel, as failed with
// [CanceledResult] (shown as canceled): a pending task never reaches the
// agent, a claimed one is ended at once; an ended task is not cancelable.
func (h *handler) CancelTask(ctx context.Context, req *a2a.CancelTaskRequest) (*a2a.Task, error) {
	a, err := h.agent(req.Tenant)
	if err != nil {
		return nil, err
	}
	t, err := h.ownTask(ctx, a, req.ID)
	if err != nil {
		return nil, err
	}
	c, err := task.Cancel(ctx, h.s.cfg.Tasks, t.ID)
	switch {
	case errors.Is(err, task.ErrEnded):
		return nil, a2a.NewError(a2a.ErrTaskNotCancelable, "task "+t.ID+" has already ended ("+string(stateOf(c))+")")
	case err != nil:
		return nil, err
	}
	return toA2A(a, c, nil), nil
}

// GetTaskPushConfig and the other push methods: push notifications are
// not supported.
func (h *handler) GetTaskPushConfig(context.Context, *a2a.GetTaskPushConfigRequest) (*a2a.PushConfig, error) {
	return nil, a2a.ErrPushNotificationNotSupported
}

func (h *handler) ListTaskPushConfigs(context.Context, *a2a.ListTaskPushConfigRequest) (*a2a.ListTaskPushConfigResponse, error) {
	return nil, a2a.ErrPushNotificationNotSupported
}

func (h *handler) CreateTaskPushConfig(context.Context, *a2a.PushConfig) (*a2a.PushConfig, error) {
	return nil, a2a.ErrPushNotificationNotSupported
}

func (h *handler) DeleteTaskPushConfig(context.Context, *a2a.DeleteTaskPushConfigRequest) error {
	return a2a.ErrPushNotificationNotSupported
}

// GetExtendedAgentCard: there is no extended card; the public card says
// everything.
func (h *handler) GetExtendedAgentCard(context.Context, *a2a.GetExtendedAgentCardRequest) (*a2a.AgentCard, error) {
	return nil, a2a.ErrExtendedCardNotConfigured
}

// stateOf maps a queue task's state (task.StateOf, the mapping MCP's
// Tasks extension shares) to an A2A task state (see the package
// documentation).
func stateOf(t task.Task) a2a.TaskState {
	switch task.StateOf(t) {
	case task.StateSubmitted:
		return a2a.TaskStateSubmitted
	case task.StateWorking:
		return a2a.TaskStateWorking
	case task.StateCompleted:
		return a2a.TaskStateCompleted
	case task.StateFailed:
		return a2a.TaskStateFailed
	case task.StateCanceled:
		return a2a.TaskStateCanceled
	}
	return a2a.TaskStateUnspecified
}

// contextOf is a task's context id: derived from its id, since the queue
// keeps no context of its own (a client's contextId is not kept).
func contextOf(id string) string { return "ctx-" + id }

// toA2A converts a queue task of agent a to an A2A task: its description
// as the user's message (the history, unless historyLength is 0), its
// state, and once it has ended its result as the status message and, when
// completed, the artifacts.
func toA2A(a *existence.Agent, t task.Task, historyLength *int) *a2a.Task {
	return convert(a, t, historyLength, true)
}

// convert is toA2A, with the artifacts only when withArtifacts.
func convert(a *existence.Agent, t task.Task, historyLength *int, withArtifacts bool) *a2a.Task {
	info := a2a.TaskInfo{TaskID: a2a.TaskID(t.ID), ContextID: contextOf(t.ID)}
	at := &a2a.Task{ID: info.TaskID, ContextID: info.ContextID, Status: a2a.TaskStatus{State: stateOf(t)},
		Metadata: map[string]any{"agent": a.ID()}}
	ts := t.Submitted
	switch {
	case !t.Ended.IsZero():
		ts = t.Ended
	case !t.Assigned.IsZero():
		ts = t.Assigned
	}
	if !ts.IsZero() {
		ts = ts.UTC()
		at.Status.Timestamp = &ts
	}
	if historyLength == nil || *historyLength > 0 {
		m := a2a.NewMessageForTask(a2a.MessageRoleUser, info, a2a.NewTextPart(t.Description))
		m.ID = t.ID + "-request"
		at.History = []*a2a.Message{m}
	}
	if t.Status.Ended() && t.Result != "" {
		m := a2a.NewMessageForTask(a2a.MessageRoleAgent, info, a2a.NewTextPart(t.Result))
		m.ID = t.ID + "-result"
		at.Status.Message = m
	}
	if withArtifacts && t.Status == task.Completed {
		at.Artifacts = artifactsOf(a, t)
	}
	return at
}

// artifactsOf returns a completed task's artifacts: "summary", the goal's
// outcome (the task's result), then each artifact of the goal that
// pursued the task (identity.Goal.Artifacts, such as workspace paths),
// when the agent still holds that goal in its history.
func artifactsOf(a *existence.Agent, t task.Task) []*a2a.Artifact {
	out := []*a2a.Artifact{{ID: a2a.ArtifactID(t.ID + "-summary"), Name: "summary",
		Description: "the summary of the goal that pursued the task", Parts: a2a.ContentParts{a2a.NewTextPart(t.Result)}}}
	goals := a.State().Identity.Goals
	for i := len(goals) - 1; i >= 0; i-- {
		g := goals[i]
		if g.TaskID != t.ID {
			continue
		}
		for j, s := range g.Artifacts {
			out = append(out, &a2a.Artifact{ID: a2a.ArtifactID(fmt.Sprintf("%s-artifact-%d", t.ID, j+1)), Name: s,
				Description: "an artifact of the goal (such as a workspace path)", Parts: a2a.ContentParts{a2a.NewTextPart(s)}})
		}
		break
	}
	return out
}

// historyOf returns the history length a SendMessage asked for.
func historyOf(c *a2a.SendMessageConfig) *int {
	if c == nil {
		return nil
	}
	return c.HistoryLength
}
