package monitor

import (
	"bytes"
	"cmp"
	stdjson "encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/existence-loop/sdk/existence"
	"github.com/existence-loop/sdk/existence/requests"
	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/internal/strictjson"
	"github.com/existence-loop/sdk/task"
)

// AgentSummary is one agent in GET /api/agents: its [existence.Status],
// its last thoughts and, with ?history=1, its load history.
type AgentSummary struct {
	existence.Status
	// Thoughts are the agent's last thoughts-log lines, oldest first.
	Thoughts []Thought `json:"thoughts"`
	// History is the agent's load over time, oldest first (only with
	// ?history=1).
	History []Point `json:"history,omitempty"`
	// Memories are the agent's long-term memory counts, with
	// [Config].Memory.
	Memories *MemoryCounts `json:"memories,omitempty"`
}

// AgentsPage is the body of GET /api/agents.
type AgentsPage struct {
	// Total is how many agents match the query; Offset and Limit the
	// page's window.
	Total  int `json:"total"`
	Offset int `json:"offset"`
	Limit  int `json:"limit"`
	// Agents are the page's agents.
	Agents []AgentSummary `json:"agents"`
	// PendingRequests counts the requests waiting for an answer.
	PendingRequests int `json:"pending_requests"`
	// Scheduler is the scheduler's lanes (queue depth, lateness) when the
	// Runner is a [Scheduler]; absent otherwise.
	Scheduler *SchedulerView `json:"scheduler,omitempty"`
}

// handleAgents serves GET /api/agents?q=&sort=&offset=&limit=&history=.
func (m *Monitor) handleAgents(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	offset, err1 := intParam(q.Get("offset"), 0)
	limit, err2 := intParam(q.Get("limit"), DefaultPageSize)
	if err := errors.Join(err1, err2); err != nil || offset < 0 || limit < 1 || limit > MaxPageSize {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("offset must be 0 or more and limit 1 to %d", MaxPageSize))
		return
	}
	sortBy := cmp.Or(q.Get("sort"), "load")
	if sortBy != "load" && sortBy != "name" && sortBy != "fallbacks" {
		writeError(w, http.StatusBadRequest, `sort must be "load" (heaviest first), "name" or "fallbacks"`)
		return
	}
	needle := strings.ToLower(strings.TrimSpace(q.Get("q")))
	statuses, err := m.src.Statuses(r.Context())
	if err != nil {
		m.serverError(w, r, "listing the agents failed", err)
		return
	}
	var all []existence.Status
	for _, s := range statuses {
		if needle != "" && !strings.Contains(strings.ToLower(s.Name), needle) && !strings.Contains(s.ID, needle) {
			continue
		}
		all = append(all, s)
	}
	slices.SortStableFunc(all, func(x, y existence.Status) int {
		switch sortBy {
		case "load":
			if c := cmp.Compare(y.Load, x.Load); c != 0 {
				return c
			}
		case "fallbacks":
			if c := cmp.Compare(y.ConsecutiveFallbacks, x.ConsecutiveFallbacks); c != 0 {
				return c
			}
		}
		return cmp.Or(strings.Compare(strings.ToLower(x.Name), strings.ToLower(y.Name)), strings.Compare(x.ID, y.ID))
	})
	page := AgentsPage{Total: len(all), Offset: offset, Limit: limit, Agents: []AgentSummary{}}
	withHistory := q.Get("history") == "1" || q.Get("history") == "true"
	for _, s := range all[min(offset, len(all)):min(offset+limit, len(all))] {
		as := AgentSummary{Status: s, Thoughts: m.hist.agentThoughts(s.ID), Memories: m.memoryCounts(r, s.ID)}
		if withHistory {
			as.History = m.hist.loads(s.ID)
		}
		page.Agents = append(page.Agents, as)
	}
	if m.cfg.Requests != nil {
		if rs, err := m.cfg.Requests.List(r.Context(), requests.Filter{Status: requests.Pending}); err == nil {
			page.PendingRequests = len(rs)
		}
	}
	page.Scheduler = m.schedulerView()
	writeJSON(w, http.StatusOK, page)
}

// AgentDetail is the body of GET /api/agents/{id}.
type AgentDetail struct {
	Status existence.Status `json:"status"`
	// Identity is the agent's identity with its goal history (the newest
	// goals, as stored).
	Identity identity.Identity `json:"identity"`
	History  []Point           `json:"history"`
	Thoughts []Thought         `json:"thoughts"`
}

func (m *Monitor) handleAgent(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	status, ident, err := m.src.Detail(r.Context(), id)
	if err != nil {
		m.sourceError(w, r, "reading the agent failed", err)
		return
	}
	writeJSON(w, http.StatusOK, AgentDetail{Status: status, Identity: ident, History: m.hist.loads(id), Thoughts: m.hist.agentThoughts(id)})
}

func (m *Monitor) handleThoughts(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string][]Thought{"thoughts": m.hist.recentThoughts()})
}

func (m *Monitor) handleHealth(w http.ResponseWriter, r *http.Request) {
	uptime := int(m.clock.Now().Sub(m.started).Seconds())
	statuses, err := m.src.Statuses(r.Context())
	if err != nil {
		m.log.Warn("monitor: listing the agents failed", "err", err)
		writeJSON(w, http.StatusServiceUnavailable, map[string]any{"status": "error", "error": "listing the agents failed", "uptime_seconds": uptime})
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"status": "ok", "agents": len(statuses), "uptime_seconds": uptime})
}

// MessageRequest is the body of POST /api/messages.
type MessageRequest struct {
	// Text is the host message ("A PERSON SAID"), at most 500 characters.
	Text string `json:"text"`
	// Agents are the ids to tell; empty means every agent.
	Agents []string `json:"agents,omitempty"`
}

func (m *Monitor) handleMessage(w http.ResponseWriter, r *http.Request) {
	var req MessageRequest
	if !m.decode(w, r, &req) {
		return
	}
	text := strings.TrimSpace(req.Text)
	limit := identity.DefaultLimits().HostMessage
	switch n := utf8.RuneCountInString(text); {
	case text == "":
		writeError(w, http.StatusBadRequest, `"text" is missing or blank`)
		return
	case n > limit:
		writeError(w, http.StatusBadRequest, fmt.Sprintf(`"text" is %d characters; an agent reads at most %d`, n, limit))
		return
	}
	if err := m.src.SayAsHost(r.Context(), text, req.Agents...); err != nil {
		m.sourceError(w, r, "the message was delivered but could not be saved, so a restart may lose it", err)
		return
	}
	to := req.Agents
	if len(to) == 0 {
		to = []string{}
	}
	writeJSON(w, http.StatusAccepted, MessageReply{Status: "delivered", Agents: to, Text: text})
}

// MessageReply is the body of a 202 answer to POST /api/messages.
type MessageReply struct {
	// Status is "delivered".
	Status string `json:"status"`
	// Agents are the ids told; empty means every agent.
	Agents []string `json:"agents"`
	// Text is the message as delivered (trimmed).
	Text string `json:"text"`
}

// TaskRequest is the body of POST /api/tasks.
type TaskRequest struct {
	// Description is what to do.
	Description string `json:"description"`
	// Agent is the id of the agent the task is for; empty: any agent.
	Agent string `json:"agent,omitempty"`
}

func (m *Monitor) handleTasks(w http.ResponseWriter, r *http.Request) {
	if m.cfg.Tasks == nil {
		writeError(w, http.StatusNotFound, "this monitor has no task queue")
		return
	}
	ts, err := m.cfg.Tasks.List(r.Context())
	if err != nil {
		m.serverError(w, r, "listing the tasks failed", err)
		return
	}
	if ts == nil {
		ts = []task.Task{}
	}
	writeJSON(w, http.StatusOK, map[string][]task.Task{"tasks": ts})
}

func (m *Monitor) handleSubmitTask(w http.ResponseWriter, r *http.Request) {
	if m.cfg.Tasks == nil {
		writeError(w, http.StatusNotFound, "this monitor has no task queue")
		return
	}
	var req TaskRequest
	if !m.decode(w, r, &req) {
		return
	}
	desc := strings.TrimSpace(req.Description)
	switch n := utf8.RuneCountInString(desc); {
	case desc == "":
		writeError(w, http.StatusBadRequest, `"description" is missing or blank`)
		return
	case n > task.DefaultMaxDescription:
		writeError(w, http.StatusBadRequest, fmt.Sprintf(`"description" is %d characters; the limit is %d`, n, task.DefaultMaxDescription))
		return
	}
	if req.Agent != "" {
		if _, _, err := m.src.Detail(r.Context(), req.Agent); err != nil {
			m.sourceError(w, r, "reading the agent failed", err)
			return
		}
	}
	t, err := m.cfg.Tasks.Submit(r.Context(), desc, req.Agent)
	switch {
	case err == nil:
		writeJSON(w, http.StatusCreated, t)
	case errors.Is(err, task.ErrInvalid):
		writeError(w, http.StatusBadRequest, err.Error())
	case errors.Is(err, task.ErrFull):
		writeError(w, http.StatusServiceUnavailable, "the task queue is full; try again when tasks have ended")
	default:
		m.serverError(w, r, "submitting the task failed", err)
	}
}

// RequestView is one request in GET /api/requests: the request and its
// age in seconds (until now while pending).
type RequestView struct {
	requests.Request
	AgeSeconds float64 `json:"age_seconds"`
}

func (m *Monitor) handleRequests(w http.ResponseWriter, r *http.Request) {
	if m.cfg.Requests == nil {
		writeError(w, http.StatusNotFound, "this monitor has no request queue")
		return
	}
	q := r.URL.Query()
	f := requests.Filter{Agent: q.Get("agent"), Status: requests.Status(q.Get("status"))}
	if f.Status == "all" {
		f.Status = ""
	}
	rs, err := m.cfg.Requests.List(r.Context(), f)
	if err != nil {
		m.serverError(w, r, "listing the requests failed", err)
		return
	}
	now := m.clock.Now()
	out := make([]RequestView, 0, len(rs))
	for _, x := range rs {
		out = append(out, RequestView{Request: x, AgeSeconds: x.Age(now).Seconds()})
	}
	writeJSON(w, http.StatusOK, map[string][]RequestView{"requests": out})
}

// AnswerRequest is the body of POST /api/requests/{id}/answer.
type AnswerRequest struct {
	// Status is "approved", "rejected" or "answered".
	Status requests.Status `json:"status"`
	// Answer is the answer or the reason (required for "answered").
	Answer string `json:"answer,omitempty"`
}

// handleAnswer answers a request and delivers the answer to the agent's
// inbox (requests.Deliver) when the agent runs here.
func (m *Monitor) handleAnswer(w http.ResponseWriter, r *http.Request) {
	if m.cfg.Requests == nil {
		writeError(w, http.StatusNotFound, "this monitor has no request queue")
		return
	}
	var req AnswerRequest
	if !m.decode(w, r, &req) {
		return
	}
	x, err := m.cfg.Requests.Answer(r.Context(), r.PathValue("id"), req.Status, req.Answer)
	switch {
	case err == nil:
	case errors.Is(err, requests.ErrNotFound):
		writeError(w, http.StatusNotFound, err.Error())
		return
	case errors.Is(err, requests.ErrEnded):
		writeError(w, http.StatusConflict, err.Error())
		return
	case errors.Is(err, requests.ErrInvalid):
		writeError(w, http.StatusBadRequest, err.Error())
		return
	default:
		m.serverError(w, r, "answering the request failed", err)
		return
	}
	delivered := true
	switch err := m.src.DeliverToInbox(r.Context(), x.Agent, requests.Message(x)); {
	case errors.Is(err, ErrNoAgent), errors.Is(err, ErrUnsupported):
		delivered = false // the agent reads the answer with check_request
	case err != nil:
		m.serverError(w, r, "the request was answered but the answer could not be saved in the agent's inbox", err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"request": x, "delivered": delivered})
}

// decode reads the body as one JSON object into v: 415 for another media
// type, 413 over the limit, 400 for invalid JSON, a key named twice,
// unknown fields or trailing data. The body is decoded with
// encoding/json/v2 semantics (internal/strictjson): field names match
// exactly, and {"text": "a", "text": "b"} is an error, never "b". It
// writes the error and returns false on failure.
func (m *Monitor) decode(w http.ResponseWriter, r *http.Request, v any) bool {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "application/json" {
		writeError(w, http.StatusUnsupportedMediaType, "the body must be JSON sent with Content-Type: application/json")
		return false
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, m.cfg.MaxBody))
	if err == nil {
		if len(bytes.TrimSpace(body)) == 0 {
			err = io.EOF
		} else {
			err = strictjson.Unmarshal(body, v, json.RejectUnknownMembers(true))
		}
	}
	if err == nil {
		return true
	}
	status, msg := http.StatusBadRequest, ""
	var (
		tooLarge *http.MaxBytesError
		dup      *strictjson.DuplicateKeyError
		syntax   *jsontext.SyntacticError
		semantic *json.SemanticError
	)
	switch {
	case errors.As(err, &tooLarge):
		status, msg = http.StatusRequestEntityTooLarge, fmt.Sprintf("request body too large: the limit is %d bytes", tooLarge.Limit)
	case errors.Is(err, io.EOF):
		msg = "empty request body: send a JSON object"
	case errors.As(err, &dup):
		msg = fmt.Sprintf("invalid JSON: the key %q appears twice (at %s); send each key once", dup.Key, dup.Pointer)
	case errors.As(err, &syntax) && errors.Is(syntax.Err, io.ErrUnexpectedEOF):
		msg = "invalid JSON: unexpected end of the body"
	case errors.As(err, &syntax) && strings.Contains(syntax.Err.Error(), "after top-level value"):
		msg = "trailing data after the JSON object"
	case errors.As(err, &syntax):
		msg = fmt.Sprintf("invalid JSON at byte %d: %v", syntax.ByteOffset, syntax.Err)
	case errors.As(err, &semantic) && errors.Is(semantic.Err, json.ErrUnknownName):
		msg = "unknown field " + strconv.Quote(semantic.JSONPointer.LastToken())
	case errors.As(err, &semantic) && semantic.JSONPointer == "":
		msg = "invalid JSON: the body must be an object, not " + kindName(semantic.JSONKind)
	case errors.As(err, &semantic):
		msg = fmt.Sprintf("invalid JSON: %q must be %s, not %s", strings.TrimPrefix(string(semantic.JSONPointer), "/"), goKind(semantic), kindName(semantic.JSONKind))
	default:
		msg = "invalid request body: " + err.Error()
	}
	writeError(w, status, msg)
	return false
}

// sourceError writes a [Source]'s error: 404 for [ErrNoAgent], 501 for
// [ErrUnsupported] (both with the error's text), else 500 with msg.
func (m *Monitor) sourceError(w http.ResponseWriter, r *http.Request, msg string, err error) {
	switch {
	case errors.Is(err, ErrNoAgent):
		writeError(w, http.StatusNotFound, err.Error())
	case errors.Is(err, ErrUnsupported):
		writeError(w, http.StatusNotImplemented, err.Error())
	default:
		m.serverError(w, r, msg, err)
	}
}

// kindName names a JSON kind for an error message.
func kindName(k jsontext.Kind) string {
	switch k {
	case '"':
		return "a string"
	case '0':
		return "a number"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	case '[':
		return "an array"
	case '{':
		return "an object"
	}
	return "this value"
}

// goKind says what a field expected, from the Go type that could not hold
// the value.
func goKind(e *json.SemanticError) string {
	if e.GoType == nil {
		return "another kind of value"
	}
	switch e.GoType.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Struct, reflect.Map:
		return "an object"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
		return "a number"
	}
	return e.GoType.String()
}

func (m *Monitor) serverError(w http.ResponseWriter, r *http.Request, msg string, err error) {
	m.log.Error("monitor: "+msg, "method", r.Method, "path", r.URL.Path, "err", err)
	writeError(w, http.StatusInternalServerError, msg)
}

func intParam(s string, def int) (int, error) {
	if s == "" {
		return def, nil
	}
	return strconv.Atoi(s)
}

// ErrorBody is the body of every error answer.
type ErrorBody struct {
	Error string `json:"error"`
}

func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, ErrorBody{Error: msg})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := stdjson.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		b = []byte(`{"error":"encoding the response failed"}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}

// quote quotes s for an error message, cut to 100 bytes.
func quote(s string) string {
	if len(s) > 100 {
		s = s[:100] + "…"
	}
	return `"` + strings.ToValidUTF8(s, "?") + `"`
}
