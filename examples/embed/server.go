package main

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/existence-loop/sdk/existence"
	"github.com/existence-loop/sdk/existence/taskqueue"
	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/suffering"
)

// maxBody is the default limit of a request body, in bytes.
const maxBody = 64 << 10

// agentAPI is what the HTTP API needs of the agent; *existence.Agent
// satisfies it.
type agentAPI interface {
	ID() string
	Name() string
	State() *identity.State
	Say(ctx context.Context, text string) error
}

var _ agentAPI = (*existence.Agent)(nil)

// serverConfig configures the HTTP API. Agent and Tasks are required.
type serverConfig struct {
	Agent agentAPI
	Tasks *taskqueue.Queue
	// Events is the hub the agent's observer publishes to; nil means a new
	// hub with the default limits (events then reach no one unless the
	// caller publishes to server.events).
	Events *hub
	// Token, when not empty, is the bearer token every request must carry.
	Token string
	// Clock drives the event streams' keep-alive ticker; default
	// existence.SystemClock.
	Clock existence.Clock
	// KeepAlive is the interval of keep-alive comments on event streams;
	// default 15 s.
	KeepAlive time.Duration
	// MaxBody limits request bodies, in bytes; default 64 KiB.
	MaxBody int64
	// MaxDescription and MaxMessage limit a task description and a host
	// message, in characters (Unicode code points); longer ones are
	// refused rather than cut. Defaults: taskqueue.DefaultMaxDescription
	// (2000) and what the prompt shows of a host message,
	// identity.Limits.HostMessage (500).
	MaxDescription int
	MaxMessage     int
	// Logger receives diagnostics; default slog.Default().
	Logger *slog.Logger
}

// server is the HTTP API over one agent: an http.Handler.
type server struct {
	agent     agentAPI
	tasks     *taskqueue.Queue
	events    *hub
	token     *[sha256.Size]byte // nil: no authentication
	clock     existence.Clock
	keepAlive time.Duration
	maxBody   int64
	maxDesc   int
	maxMsg    int
	log       *slog.Logger
}

// newServer returns the HTTP API described in doc.go.
func newServer(cfg serverConfig) *server {
	s := &server{
		agent:     cfg.Agent,
		tasks:     cfg.Tasks,
		events:    cfg.Events,
		clock:     cfg.Clock,
		keepAlive: cfg.KeepAlive,
		maxBody:   cfg.MaxBody,
		maxDesc:   cfg.MaxDescription,
		maxMsg:    cfg.MaxMessage,
		log:       cfg.Logger,
	}
	if cfg.Token != "" {
		// Comparing digests keeps the comparison constant-time even in the
		// token's length.
		sum := sha256.Sum256([]byte(cfg.Token))
		s.token = &sum
	}
	if s.events == nil {
		s.events = newHub(0, 0)
	}
	if s.clock == nil {
		s.clock = existence.SystemClock
	}
	if s.keepAlive <= 0 {
		s.keepAlive = defaultKeepAlive
	}
	if s.maxBody <= 0 {
		s.maxBody = maxBody
	}
	if s.maxDesc <= 0 {
		s.maxDesc = taskqueue.DefaultMaxDescription
	}
	if s.maxMsg <= 0 {
		s.maxMsg = identity.DefaultLimits().HostMessage
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	return s
}

// methods maps HTTP methods to the handlers of one path.
type methods map[string]http.HandlerFunc

// ServeHTTP authenticates the request, then routes it. Unknown paths get
// 404 and unsupported methods 405 with an Allow header, both as JSON.
func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "no-store")
	if !s.authorized(w, r) {
		return
	}
	var m methods
	switch p := r.URL.Path; {
	case p == "/agent":
		m = methods{http.MethodGet: s.handleAgent}
	case p == "/tasks":
		m = methods{http.MethodGet: s.handleListTasks, http.MethodPost: s.handleSubmitTask}
	case strings.HasPrefix(p, "/tasks/") && len(p) > len("/tasks/") && !strings.Contains(p[len("/tasks/"):], "/"):
		m = methods{http.MethodGet: s.handleGetTask}
	case p == "/messages":
		m = methods{http.MethodPost: s.handleMessage}
	case p == "/events":
		m = methods{http.MethodGet: s.handleEvents}
	default:
		writeError(w, http.StatusNotFound, fmt.Sprintf("no such endpoint %q: the API is GET /agent, GET and POST /tasks, GET /tasks/{id}, POST /messages and GET /events", p))
		return
	}
	if f, ok := m[r.Method]; ok {
		f(w, r)
		return
	}
	allow := make([]string, 0, len(m))
	for k := range m {
		allow = append(allow, k)
	}
	slices.Sort(allow)
	h.Set("Allow", strings.Join(allow, ", "))
	writeError(w, http.StatusMethodNotAllowed, fmt.Sprintf("method %s not allowed on %s; use %s", r.Method, r.URL.Path, strings.Join(allow, " or ")))
}

// authorized checks the bearer token (RFC 6750) when one is configured and
// answers 401 with a WWW-Authenticate challenge otherwise.
func (s *server) authorized(w http.ResponseWriter, r *http.Request) bool {
	if s.token == nil {
		return true
	}
	scheme, cred, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	cred = strings.TrimSpace(cred)
	if !ok || !strings.EqualFold(scheme, "Bearer") || cred == "" {
		w.Header().Set("WWW-Authenticate", `Bearer realm="existence"`)
		writeError(w, http.StatusUnauthorized, `missing bearer token: send "Authorization: Bearer TOKEN"`)
		return false
	}
	sum := sha256.Sum256([]byte(cred))
	if subtle.ConstantTimeCompare(sum[:], s.token[:]) != 1 {
		w.Header().Set("WWW-Authenticate", `Bearer realm="existence", error="invalid_token"`)
		writeError(w, http.StatusUnauthorized, "invalid bearer token")
		return false
	}
	return true
}

// agentView is the body of GET /agent.
type agentView struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	// Identity is the agent's identity without its goal history (see Goal
	// and LastGoal).
	Identity  identity.Identity `json:"identity"`
	Suffering sufferingView     `json:"suffering"`
	// Goal is the active goal, or null.
	Goal *identity.Goal `json:"goal"`
	// LastGoal is the most recently ended goal with its outcome, or null.
	LastGoal *identity.Goal `json:"last_goal"`
	// Inbox and HostMessages count unread peer and host messages.
	Inbox        int       `json:"inbox"`
	HostMessages int       `json:"host_messages"`
	UpdatedAt    time.Time `json:"updated_at,omitzero"`
}

// sufferingView summarises the suffering state (spec §4).
type sufferingView struct {
	// Load is the cumulative load, 0–1.
	Load float64 `json:"load"`
	// Level is "none", "prominent", "constrained", "dominant" or "crisis".
	Level string `json:"level"`
	// Active are the active stressors, most severe first.
	Active       []suffering.Stressor `json:"active"`
	CrisisCycles int                  `json:"crisis_cycles"`
}

func (s *server) handleAgent(w http.ResponseWriter, _ *http.Request) {
	st := s.agent.State()
	id := st.Identity
	v := agentView{
		ID:       s.agent.ID(),
		Name:     s.agent.Name(),
		Goal:     id.ActiveGoal(),
		LastGoal: id.LastEnded(),
		Suffering: sufferingView{
			Load:         st.Suffering.Load(),
			Level:        st.Suffering.Level().String(),
			Active:       st.Suffering.BySeverity(),
			CrisisCycles: st.Suffering.CrisisCycles,
		},
		Inbox:        len(st.Inbox),
		HostMessages: len(st.Host),
		UpdatedAt:    st.UpdatedAt,
	}
	if v.Suffering.Active == nil {
		v.Suffering.Active = []suffering.Stressor{}
	}
	id.Goals = nil
	v.Identity = id
	writeJSON(w, http.StatusOK, v)
}

// taskRequest is the body of POST /tasks.
type taskRequest struct {
	Description string `json:"description"`
	// Agent is the id of the agent the task is for: omitted means this
	// service's agent, "" any agent sharing the state directory.
	Agent *string `json:"agent"`
}

func (s *server) handleSubmitTask(w http.ResponseWriter, r *http.Request) {
	var req taskRequest
	if !s.decode(w, r, &req) {
		return
	}
	desc := strings.TrimSpace(req.Description)
	if desc == "" {
		writeError(w, http.StatusBadRequest, `"description" is missing or blank`)
		return
	}
	if n := utf8.RuneCountInString(desc); n > s.maxDesc {
		writeError(w, http.StatusBadRequest, fmt.Sprintf(`"description" is %d characters; the limit is %d`, n, s.maxDesc))
		return
	}
	agent := s.agent.ID()
	if req.Agent != nil {
		agent = *req.Agent
	}
	t, err := s.tasks.Submit(r.Context(), desc, agent)
	switch {
	case err == nil:
	case errors.Is(err, taskqueue.ErrInvalid):
		writeError(w, http.StatusBadRequest, err.Error())
		return
	case errors.Is(err, taskqueue.ErrFull):
		writeError(w, http.StatusServiceUnavailable, "the task queue is full; try again when tasks have ended")
		return
	default:
		s.serverError(w, r, "submitting the task failed", err)
		return
	}
	w.Header().Set("Location", "/tasks/"+t.ID)
	writeJSON(w, http.StatusCreated, t)
}

func (s *server) handleListTasks(w http.ResponseWriter, r *http.Request) {
	ts, err := s.tasks.List(r.Context())
	if err != nil {
		s.serverError(w, r, "listing the tasks failed", err)
		return
	}
	if ts == nil {
		ts = []taskqueue.Task{}
	}
	writeJSON(w, http.StatusOK, map[string][]taskqueue.Task{"tasks": ts})
}

func (s *server) handleGetTask(w http.ResponseWriter, r *http.Request) {
	id := strings.TrimPrefix(r.URL.Path, "/tasks/")
	t, err := s.tasks.Get(r.Context(), id)
	switch {
	case err == nil:
		writeJSON(w, http.StatusOK, t)
	case errors.Is(err, taskqueue.ErrNotFound):
		writeError(w, http.StatusNotFound, fmt.Sprintf("no task %q", id))
	default:
		s.serverError(w, r, "reading the task failed", err)
	}
}

// messageRequest is the body of POST /messages.
type messageRequest struct {
	Text string `json:"text"`
}

// messageReply is the body of a 202 answer to POST /messages.
type messageReply struct {
	Status string `json:"status"`
	Agent  string `json:"agent"`
	Text   string `json:"text"`
}

func (s *server) handleMessage(w http.ResponseWriter, r *http.Request) {
	var req messageRequest
	if !s.decode(w, r, &req) {
		return
	}
	text := strings.TrimSpace(req.Text)
	if text == "" {
		writeError(w, http.StatusBadRequest, `"text" is missing or blank`)
		return
	}
	if n := utf8.RuneCountInString(text); n > s.maxMsg {
		writeError(w, http.StatusBadRequest, fmt.Sprintf(`"text" is %d characters; the agent reads at most %d`, n, s.maxMsg))
		return
	}
	if err := s.agent.Say(r.Context(), text); err != nil {
		// Say keeps the message in memory even when saving fails.
		s.serverError(w, r, "the message was delivered but could not be saved, so a restart may lose it", err)
		return
	}
	writeJSON(w, http.StatusAccepted, messageReply{Status: "delivered", Agent: s.agent.ID(), Text: text})
}

// decode reads the request body as one JSON object into v, refusing other
// media types (415), bodies over the limit (413), invalid JSON, unknown
// fields and trailing data (400). It writes the error and returns false on
// failure.
func (s *server) decode(w http.ResponseWriter, r *http.Request, v any) bool {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "application/json" {
		writeError(w, http.StatusUnsupportedMediaType, "the body must be JSON sent with Content-Type: application/json")
		return false
	}
	r.Body = http.MaxBytesReader(w, r.Body, s.maxBody)
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	err = dec.Decode(v)
	if err == nil {
		// Exactly one value: anything but white space after it is an error.
		if err = dec.Decode(&json.RawMessage{}); err == io.EOF {
			return true
		} else if err == nil {
			err = errors.New("trailing data after the JSON object")
		}
	}
	status, msg := http.StatusBadRequest, ""
	var (
		tooLarge *http.MaxBytesError
		syntax   *json.SyntaxError
		typ      *json.UnmarshalTypeError
	)
	switch {
	case errors.As(err, &tooLarge):
		status, msg = http.StatusRequestEntityTooLarge, fmt.Sprintf("request body too large: the limit is %d bytes", tooLarge.Limit)
	case errors.Is(err, io.EOF):
		msg = "empty request body: send a JSON object"
	case errors.Is(err, io.ErrUnexpectedEOF):
		msg = "invalid JSON: unexpected end of the body"
	case errors.As(err, &syntax):
		msg = fmt.Sprintf("invalid JSON at byte %d: %v", syntax.Offset, err)
	case errors.As(err, &typ):
		if typ.Field == "" {
			msg = fmt.Sprintf("invalid JSON: the body must be an object, not %s", typ.Value)
		} else {
			msg = fmt.Sprintf("invalid JSON: %q must be %s, not %s", typ.Field, typ.Type, typ.Value)
		}
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		msg = "unknown field " + strings.TrimPrefix(err.Error(), "json: unknown field ")
	default:
		msg = "invalid request body: " + err.Error()
	}
	writeError(w, status, msg)
	return false
}

// serverError logs err and answers 500 with msg (not err, which may hold
// file paths).
func (s *server) serverError(w http.ResponseWriter, r *http.Request, msg string, err error) {
	s.log.Error(msg, "method", r.Method, "path", r.URL.Path, "err", err)
	writeError(w, http.StatusInternalServerError, msg)
}

// errorBody is the body of every error answer.
type errorBody struct {
	Error string `json:"error"`
}

func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, errorBody{Error: msg})
}

// writeJSON answers status with v as JSON.
func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		b = []byte(`{"error":"encoding the response failed"}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}
