package monitor_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/existence"
	"github.com/existence-loop/sdk/existence/requests"
	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/monitor"
	"github.com/existence-loop/sdk/store/taskqueue"
)

// storeSource is a Source over stored states, as a process that runs no
// agent has them: it can deliver messages only when canSend is set.
type storeSource struct {
	states  map[string]*identity.AgentState
	canSend bool
	failAll error // Statuses fails with it

	mu   sync.Mutex
	sent []string // "id: text"
}

func (s *storeSource) Statuses(context.Context) ([]existence.Status, error) {
	if s.failAll != nil {
		return nil, s.failAll
	}
	var out []existence.Status
	for _, id := range slices.Sorted(maps.Keys(s.states)) {
		out = append(out, existence.StatusOf(s.states[id]))
	}
	return out, nil
}

func (s *storeSource) Detail(_ context.Context, id string) (existence.Status, identity.Identity, error) {
	st, ok := s.states[id]
	if !ok {
		return existence.Status{}, identity.Identity{}, monitor.NoAgentError(id)
	}
	return existence.StatusOf(st), st.Identity, nil
}

func (s *storeSource) SayAsHost(_ context.Context, text string, to ...string) error {
	if !s.canSend {
		return errors.Join(monitor.ErrUnsupported, errors.New("this store cannot carry messages to another process"))
	}
	for _, id := range to {
		if s.states[id] == nil {
			return monitor.NoAgentError(id)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, id := range to {
		s.sent = append(s.sent, id+": "+text)
	}
	return nil
}

func (s *storeSource) DeliverToInbox(_ context.Context, id string, m identity.AgentMessage) error {
	if !s.canSend {
		return monitor.ErrUnsupported
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sent = append(s.sent, id+": "+m.Text)
	return nil
}

func newStoreSource() *storeSource {
	s := &storeSource{states: map[string]*identity.AgentState{}}
	for _, a := range trio {
		st := &identity.AgentState{Identity: identity.New(a[0], a[1], t0)}
		st.Identity.Goals = []identity.Goal{{ID: "g-" + a[0], Objective: "work as " + a[1], Status: identity.Active, Started: t0}}
		s.states[a[0]] = st
	}
	return s
}

// TestSource: a monitor over a Source (no agent in this process) serves
// its statuses and details, and answers what the Source cannot do with
// 501 and a clear error.
func TestSource(t *testing.T) {
	tests := []struct {
		name          string
		canSend       bool
		method        string
		target, body  string
		status        int
		want, errText string
	}{
		{"agents", false, "GET", "/api/agents?sort=name", "", 200, `"goal":"work as Cedar"`, ""},
		{"detail", false, "GET", "/api/agents/analyst", "", 200, `"name":"Cipher"`, ""},
		{"unknown detail", false, "GET", "/api/agents/nobody", "", 404, "", `no agent "nobody"`},
		{"healthz", false, "GET", "/healthz", "", 200, `"agents":3`, ""},
		{"message refused", false, "POST", "/api/messages", `{"text":"hello"}`, 501, "", "not supported"},
		{"message sent", true, "POST", "/api/messages", `{"text":"hello","agents":["scout"]}`, 202, `"status":"delivered"`, ""},
		{"message to nobody", true, "POST", "/api/messages", `{"text":"hello","agents":["nobody"]}`, 404, "", `no agent "nobody"`},
		{"task", false, "POST", "/api/tasks", `{"description":"write a README","agent":"builder"}`, 201, `"agent":"builder"`, ""},
		{"task for nobody", false, "POST", "/api/tasks", `{"description":"x","agent":"nobody"}`, 404, "", `no agent "nobody"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := newStoreSource()
			src.canSend = tt.canSend
			mon, err := monitor.New(monitor.Config{Source: src, Tasks: taskqueue.NewMemory(taskqueue.Options{}), Logger: slog.New(slog.DiscardHandler)})
			require.NoError(t, err)
			defer mon.Close()
			headers := browser(t, mon)
			status, body := do(t, mon, tt.method, tt.target, tt.body, headers)
			assert.Equal(t, tt.status, status, body)
			assert.Contains(t, body, tt.want)
			if tt.errText != "" {
				var eb monitor.ErrorBody
				require.NoError(t, json.Unmarshal([]byte(body), &eb), body)
				assert.Contains(t, eb.Error, tt.errText)
			}
		})
	}
}

// TestSourceAnswerDelivery: an answered request reaches the agent's inbox
// when the Source can carry it, and is answered all the same (delivered
// false) when it cannot.
func TestSourceAnswerDelivery(t *testing.T) {
	for _, canSend := range []bool{true, false} {
		src := newStoreSource()
		src.canSend = canSend
		reqs := requests.NewMemory(requests.Options{Now: func() time.Time { return t0 }})
		_, err := reqs.Submit(context.Background(), "builder", requests.Approval, "publish design/pump.md")
		require.NoError(t, err)
		mon, err := monitor.New(monitor.Config{Source: src, Requests: reqs, Logger: slog.New(slog.DiscardHandler)})
		require.NoError(t, err)
		status, body := do(t, mon, "POST", "/api/requests/1/answer", `{"status":"approved"}`, browser(t, mon))
		mon.Close()
		require.Equal(t, 200, status, body)
		var got struct{ Delivered bool }
		require.NoError(t, json.Unmarshal([]byte(body), &got))
		assert.Equal(t, canSend, got.Delivered)
		if canSend {
			assert.Equal(t, []string{`builder: your request req-000001 (approval: "publish design/pump.md") was approved`}, src.sent)
		} else {
			assert.Empty(t, src.sent)
		}
	}
}

func TestSourceErrors(t *testing.T) {
	_, err := monitor.New(monitor.Config{})
	require.ErrorContains(t, err, "set one of Config.Runner and Config.Source")
	e := newEnv(t, 1, monitor.Config{})
	_, err = monitor.New(monitor.Config{Runner: e.rnr, Source: newStoreSource()})
	require.ErrorContains(t, err, "set one of")

	src := newStoreSource()
	src.failAll = errors.New("database is down")
	mon, err := monitor.New(monitor.Config{Source: src, Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	defer mon.Close()
	status, body := do(t, mon, "GET", "/api/agents", "", nil)
	assert.Equal(t, 500, status)
	assert.Contains(t, body, "listing the agents failed")
	status, _ = do(t, mon, "GET", "/healthz", "", nil)
	assert.Equal(t, 503, status)
}

// TestRunnerSource: the adapter of a Runner checks every id before
// delivering anything.
func TestRunnerSource(t *testing.T) {
	e := newEnv(t, 3, monitor.Config{})
	src := monitor.RunnerSource(e.rnr)
	ctx := context.Background()
	err := src.SayAsHost(ctx, "hello", "scout", "nobody")
	require.ErrorIs(t, err, monitor.ErrNoAgent)
	assert.Equal(t, `no agent "nobody"`, err.Error())
	assert.Empty(t, e.rnr.Agent("scout").State().Host, "nothing delivered")
	require.NoError(t, src.SayAsHost(ctx, "hello", "scout"))
	assert.Len(t, e.rnr.Agent("scout").State().Host, 1)

	statuses, err := src.Statuses(ctx)
	require.NoError(t, err)
	require.Len(t, statuses, 3)
	assert.Equal(t, "scout", statuses[0].ID)
	st, ident, err := src.Detail(ctx, "analyst")
	require.NoError(t, err)
	assert.Equal(t, "Cipher", st.Name)
	assert.Equal(t, "analyst", ident.AgentID)
	_, _, err = src.Detail(ctx, "nobody")
	require.ErrorIs(t, err, monitor.ErrNoAgent)
	require.ErrorIs(t, src.DeliverToInbox(ctx, "nobody", identity.AgentMessage{Text: "x"}), monitor.ErrNoAgent)
	require.NoError(t, src.DeliverToInbox(ctx, "builder", identity.AgentMessage{From: "your human", Text: "yes"}))
	assert.Equal(t, "yes", e.rnr.Agent("builder").State().Inbox[0].Text)
}
