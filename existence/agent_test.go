package existence_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/existence"
	"github.com/existence-loop/sdk/existence/event"
	"github.com/existence-loop/sdk/existence/existencetest"
	"github.com/existence-loop/sdk/existence/runner"
	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/llm"
	"github.com/existence-loop/sdk/llm/llmtest"
	"github.com/existence-loop/sdk/llm/middleware"
	"github.com/existence-loop/sdk/prompt"
	"github.com/existence-loop/sdk/store/filestore"
	"github.com/existence-loop/sdk/store/memstore"
	"github.com/existence-loop/sdk/store/taskqueue"
	"github.com/existence-loop/sdk/suffering"
	"github.com/existence-loop/sdk/task"
)

var t0 = time.Date(2026, 4, 13, 12, 0, 0, 0, time.UTC)

// reply builds a valid model reply.
func reply(t testing.TB, r map[string]any) llmtest.Reply {
	t.Helper()
	if _, ok := r["action"]; !ok {
		r["action"] = "goal"
	}
	b, err := json.Marshal(r)
	require.NoError(t, err)
	return llmtest.Reply{Text: string(b), PromptTokens: 900, OutputTokens: 120}
}

func goalReply(t testing.TB, goal string) llmtest.Reply {
	return reply(t, map[string]any{"content": goal, "reasoning": "because " + goal})
}

type fixture struct {
	clock *existencetest.Clock
	rec   *existencetest.Recorder
	store *memstore.Store
	model *llmtest.Fake
}

func newFixture(replies ...llmtest.Reply) *fixture {
	return &fixture{
		clock: existencetest.NewClock(t0),
		rec:   &existencetest.Recorder{},
		store: memstore.New(),
		model: llmtest.NewFake(replies...),
	}
}

func (f *fixture) config(cfg existence.Config) existence.Config {
	if cfg.ID == "" {
		cfg.ID, cfg.Name = "scout", "Cedar"
	}
	if cfg.Model == nil {
		cfg.Model = f.model
	}
	if cfg.Store == nil {
		cfg.Store = f.store
	}
	cfg.Timing.Clock = f.clock
	cfg.Observer = f.rec.Observe
	cfg.Logger = slog.New(slog.DiscardHandler)
	cfg.Calls.Retry = middleware.RetryPolicy{Attempts: 1}
	return cfg
}

func (f *fixture) agent(t *testing.T, cfg existence.Config) *existence.Agent {
	t.Helper()
	a, err := existence.New(context.Background(), f.config(cfg))
	require.NoError(t, err)
	t.Cleanup(func() { a.Close() })
	return a
}

// tick runs one heartbeat and waits for the goal it started to return.
func tick(t *testing.T, a *existence.Agent) {
	t.Helper()
	ctx := context.Background()
	require.NoError(t, a.Tick(ctx))
	require.NoError(t, a.WaitGoal(ctx))
}

func TestCycleAppliesResponse(t *testing.T) {
	long := strings.Repeat("é", 700)
	f := newFixture(reply(t, map[string]any{
		"content":            "read the workspace index and write a map of it",
		"reasoning":          "I know nothing of this place yet",
		"worldview_update":   long,
		"new_open_questions": []string{"what is in design/?", "who reads what I write?"},
		"new_opinions":       []map[string]string{{"opinion": "maps beat guesses", "domain": "method"}},
		"suffering_assessment": map[string]any{
			"new_stressors": []map[string]string{
				{"type": "Invisibility", "description": "nobody reads my notes", "condition": "a peer cites one"},
				{"type": "futility", "description": "nothing changes", "condition": "a file gets used"},
				{"type": "third", "description": "dropped", "condition": "never"},
			},
		},
	}))
	a := f.agent(t, existence.Config{Executor: blockingExecutor()})
	require.NoError(t, a.Tick(context.Background()))

	st := a.State()
	id := st.Identity
	g := id.ActiveGoal()
	require.NotNil(t, g)
	assert.Equal(t, "read the workspace index and write a map of it", g.Objective)
	b, err := json.Marshal(st)
	require.NoError(t, err)
	assert.NotContains(t, string(b), "I know nothing of this place yet", "reasoning is logged, not stored in identity (spec §3)")
	assert.Equal(t, strings.Repeat("é", 600), id.Worldview, "worldview cut to 600 code points")
	assert.Equal(t, []string{"what is in design/?", "who reads what I write?"}, id.Questions)
	require.Len(t, id.Opinions, 1)
	assert.Equal(t, identity.Opinion{Text: "maps beat guesses", Domain: "method", Formed: t0}, id.Opinions[0])
	require.Len(t, st.Suffering.Active, 2, "at most 2 new stressors per cycle")
	assert.Equal(t, "invisibility", st.Suffering.Active[0].Type)
	assert.Equal(t, 0.20, st.Suffering.Active[0].Severity)

	// The state is persisted.
	stored, err := f.store.Load(context.Background(), "scout")
	require.NoError(t, err)
	assert.Equal(t, g.Objective, stored.Identity.ActiveGoal().Objective)

	// Events: goal chosen with reasoning, worldview, question, opinion,
	// stressors, the dropped third, cycle stats.
	chosen := f.rec.Kind(event.GoalChosen)
	require.Len(t, chosen, 1)
	assert.Equal(t, "scout", chosen[0].AgentID)
	assert.Equal(t, "Cedar", chosen[0].Agent)
	assert.Equal(t, g.Objective, chosen[0].Text)
	assert.Equal(t, g.Objective, chosen[0].Goal)
	assert.Equal(t, "I know nothing of this place yet", chosen[0].Reasoning)
	assert.Len(t, f.rec.Kind(event.Worldview), 1)
	assert.Len(t, f.rec.Kind(event.Question), 2)
	assert.Len(t, f.rec.Kind(event.Opinion), 1)
	assert.Len(t, f.rec.Kind(event.StressorAdded), 2)
	assert.Len(t, f.rec.Kind(event.StressorDropped), 1)
	cyc := f.rec.Kind(event.Cycle)
	require.Len(t, cyc, 1)
	assert.Equal(t, 900, cyc[0].Cycle.PromptTokens)
	assert.Equal(t, 120, cyc[0].Cycle.OutputTokens)
	assert.False(t, cyc[0].Cycle.Fallback)
	calls := f.rec.Kind(event.ModelCall)
	require.Len(t, calls, 1)
	assert.Equal(t, "ok", calls[0].Call.Outcome)

	// The request carried the prompt and the response schema.
	reqs := f.model.Requests()
	require.Len(t, reqs, 1)
	assert.True(t, llmtest.JSONEqual(prompt.Schema(), reqs[0].Format))
	require.Len(t, reqs[0].Messages, 1)
	assert.Contains(t, reqs[0].Messages[0].Content, "You are Cedar.")
	assert.True(t, strings.HasSuffix(strings.TrimSpace(reqs[0].Messages[0].Content), "}"))
	assert.Contains(t, reqs[0].Messages[0].Content, "You must pick a goal. That is the only option.")
}

func TestCapsAcrossCycles(t *testing.T) {
	var replies []llmtest.Reply
	for i := range 25 {
		replies = append(replies, reply(t, map[string]any{
			"content":            fmt.Sprintf("goal %d", i),
			"reasoning":          "r",
			"new_open_questions": []string{fmt.Sprintf("q%d", i)},
			"new_opinions":       []map[string]string{{"opinion": fmt.Sprintf("o%d", i), "domain": "d"}},
		}))
	}
	f := newFixture(replies...)
	a := f.agent(t, existence.Config{})
	for range 25 {
		tick(t, a) // chooses a goal; Immediate completes it
		f.clock.Advance(6 * time.Second)
	}
	id := a.State().Identity
	require.Len(t, id.Questions, 12, "open questions capped at 12")
	assert.Equal(t, "q13", id.Questions[0], "oldest fall off")
	assert.Equal(t, "q24", id.Questions[11])
	require.Len(t, id.Opinions, 20, "opinions capped at 20")
	assert.Equal(t, "o5", id.Opinions[0].Text)
}

func TestFallbackOnModelFailureLeavesIdentityUntouched(t *testing.T) {
	unavailable := &llm.UnavailableError{Provider: "ollama", URL: "http://127.0.0.1:11434", Hint: "start it with `ollama serve`", Err: errors.New("connection refused")}
	f := newFixture(llmtest.Reply{Err: unavailable})
	a := f.agent(t, existence.Config{Executor: blockingExecutor()})
	before := a.State().Identity

	require.NoError(t, a.Tick(context.Background()))
	st := a.State()
	g := st.Identity.ActiveGoal()
	require.NotNil(t, g)
	assert.Equal(t, "explore the workspace and build something useful", g.Objective)
	assert.Equal(t, "LLM unavailable — defaulting to productive work", f.rec.Kind(event.GoalChosen)[0].Reasoning)
	assert.True(t, g.Fallback)
	assert.Contains(t, g.Cause, "unavailable")

	assert.Equal(t, before.Worldview, st.Identity.Worldview)
	assert.Equal(t, before.Opinions, st.Identity.Opinions)
	assert.Equal(t, before.Questions, st.Identity.Questions)

	fb := f.rec.Kind(event.Fallback)
	require.Len(t, fb, 1)
	assert.Equal(t, "unavailable", fb[0].FailureClass)
	assert.ErrorIs(t, fb[0].Err, llm.ErrUnavailable)
	assert.Contains(t, fb[0].String(), "ollama serve")
	assert.True(t, f.rec.Kind(event.Cycle)[0].Cycle.Fallback)
}

func TestFallbackCauses(t *testing.T) {
	tests := []struct {
		name    string
		replies []llmtest.Reply
		cause   string
		calls   int
	}{
		{"unparseable twice (one repair)", []llmtest.Reply{{Text: "I will explore."}, {Text: "still no json"}}, "invalid_output", 2},
		{"schema error twice", []llmtest.Reply{{Text: `{"content": 5}`}, {Text: `{"content": 6}`}}, "invalid_output", 2},
		{"empty reply", []llmtest.Reply{{Text: "  "}}, "empty", 1},
		{"http 400", []llmtest.Reply{{Err: llm.StatusError{Provider: "ollama", StatusCode: 400, Message: "bad"}}}, "http_400", 1},
		{"model missing", []llmtest.Reply{{Err: &llm.ModelNotFoundError{Provider: "ollama", Model: "x", Hint: "run `ollama pull x`"}}}, "model_not_found", 1},
		{"truncated garbage", []llmtest.Reply{{Text: `{"content": "half`, DoneReason: "length"}}, "truncated", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(tt.replies...)
			a := f.agent(t, existence.Config{Executor: blockingExecutor()})
			require.NoError(t, a.Tick(context.Background()))
			g := a.State().Identity.ActiveGoal()
			require.NotNil(t, g)
			assert.Equal(t, existence.FallbackContent, g.Objective)
			fb := f.rec.Kind(event.Fallback)
			require.Len(t, fb, 1)
			assert.Equal(t, tt.cause, fb[0].FailureClass)
			assert.Equal(t, tt.calls, f.model.Calls())
		})
	}
}

func TestRepairRecoversInvalidReply(t *testing.T) {
	f := newFixture(
		llmtest.Reply{Text: `{"action": "goal", "content": "map the workspace", "reasoning": "r", "new_opinions": [{"domain": "method"}]}`},
		goalReply(t, "map the workspace, fixed"),
	)
	a := f.agent(t, existence.Config{Executor: blockingExecutor()})
	require.NoError(t, a.Tick(context.Background()))
	assert.Equal(t, "map the workspace, fixed", a.State().Identity.ActiveGoal().Objective)
	reqs := f.model.Requests()
	require.Len(t, reqs, 2)
	follow := reqs[1].Messages[len(reqs[1].Messages)-1].Content
	assert.Contains(t, follow, "/new_opinions/0", "the repair quotes the JSON Pointer")
	assert.Empty(t, f.rec.Kind(event.Fallback))
}

func TestTruncatedReplyWithCompleteObjectIsSalvaged(t *testing.T) {
	text := `{"action":"goal","content":"write notes","reasoning":"r"}` + strings.Repeat("\n", 5000)
	f := newFixture(llmtest.Reply{Text: text, DoneReason: "length"})
	a := f.agent(t, existence.Config{Executor: blockingExecutor()})
	require.NoError(t, a.Tick(context.Background()))
	assert.Equal(t, "write notes", a.State().Identity.ActiveGoal().Objective)
	assert.Empty(t, f.rec.Kind(event.Fallback))
}

func TestCycleTimeoutFallsBack(t *testing.T) {
	f := newFixture(llmtest.Reply{Hang: true})
	a := f.agent(t, existence.Config{Executor: blockingExecutor(), Timing: existence.TimingConfig{CallTimeout: 20 * time.Millisecond}})
	require.NoError(t, a.Tick(context.Background()))
	fb := f.rec.Kind(event.Fallback)
	require.Len(t, fb, 1)
	assert.Equal(t, "timeout", fb[0].FailureClass)
	assert.ErrorIs(t, fb[0].Err, llm.ErrTimeout)
}

func TestNoCycleWhileGoalActiveButSufferingEscalates(t *testing.T) {
	f := newFixture(goalReply(t, "long goal"))
	exec := blockingExecutor()
	a := f.agent(t, existence.Config{Executor: exec})
	ctx := context.Background()
	require.NoError(t, a.Tick(ctx))
	require.NoError(t, a.Close())
	st := a.State()
	_, err := st.Suffering.Add(t0, suffering.Input{Type: suffering.RepeatedFailure, Description: "d", Condition: "c"})
	require.NoError(t, err)
	require.NoError(t, f.store.Save(ctx, st))
	// Reload the agent on the same store so the stressor is in its state.
	// (MaxGoalDuration -1: the goal outlives the stall rule here.)
	a = f.agent(t, existence.Config{Executor: exec, Timing: existence.TimingConfig{MaxGoalDuration: -1}})

	for range 10 {
		f.clock.Advance(6 * time.Second)
		require.NoError(t, a.Tick(ctx))
	}
	assert.Equal(t, 1, f.model.Calls(), "no existence cycle while the goal is active")
	sev := a.State().Suffering.Active[0].Severity
	want := 0.20 + 0.040*60.0/86400
	assert.InDelta(t, want, sev, 1e-12, "escalation by exact elapsed time on every tick")
	assert.Greater(t, sev, 0.20)
}

func TestGoalOutcomeFeedsHistoryAndNextPrompt(t *testing.T) {
	f := newFixture(goalReply(t, "write the index"), goalReply(t, "review the index"))
	exec := existence.ExecutorFunc(func(ctx context.Context, a existence.Assignment) (existence.Outcome, error) {
		return existence.Outcome{Status: identity.Failed, Summary: "index.md was not writable", BrokenTools: []string{"write_file"}}, nil
	})
	a := f.agent(t, existence.Config{Executor: exec})
	tick(t, a)
	f.clock.Advance(6 * time.Second)
	tick(t, a) // records FAILED, then runs the next cycle

	goals := a.State().Identity.Goals
	require.Len(t, goals, 2)
	assert.Equal(t, identity.Failed, goals[0].Status)
	assert.Equal(t, "index.md was not writable", goals[0].Outcome)
	assert.Equal(t, t0.Add(6*time.Second), goals[0].Ended)
	ended := f.rec.Kind(event.GoalEnded)
	require.NotEmpty(t, ended)
	assert.Equal(t, identity.Failed, ended[0].GoalStatus)

	p := f.model.Requests()[1].Messages[0].Content
	assert.Contains(t, p, "WHAT YOUR LAST GOAL PRODUCED:\n  [FAILED] index.md was not writable")
	assert.Contains(t, p, "write_file")
	assert.Contains(t, p, "WHAT YOU'VE BEEN DOING LATELY:\n  - [FAILED] write the index")
}

func TestExecutorErrorsAndPanicsFailTheGoal(t *testing.T) {
	tests := []struct {
		name string
		exec existence.ExecutorFunc
		want string
	}{
		{"error", func(context.Context, existence.Assignment) (existence.Outcome, error) {
			return existence.Outcome{}, errors.New("disk full")
		}, "disk full"},
		{"no status", func(context.Context, existence.Assignment) (existence.Outcome, error) {
			return existence.Outcome{}, nil
		}, "executor returned no final status"},
		{"panic", func(context.Context, existence.Assignment) (existence.Outcome, error) {
			panic("boom")
		}, "executor panicked: boom"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(goalReply(t, "g"))
			a := f.agent(t, existence.Config{Executor: tt.exec, Timing: existence.TimingConfig{MaxCycles: 1}})
			tick(t, a)
			require.NoError(t, a.Tick(context.Background()))
			g := a.State().Identity.Goals[0]
			assert.Equal(t, identity.Failed, g.Status)
			assert.Equal(t, tt.want, g.Outcome)
		})
	}
}

func TestHostMessageInterruptsGoal(t *testing.T) {
	f := newFixture(goalReply(t, "slow goal"), goalReply(t, "answer the person"))
	a := f.agent(t, existence.Config{Executor: blockingExecutor()})
	ctx := context.Background()
	require.NoError(t, a.Tick(ctx))
	require.NoError(t, a.SayAsHost(ctx, "Cedar, what are you doing?"))
	require.NoError(t, a.Tick(ctx))

	goals := a.State().Identity.Goals
	require.Len(t, goals, 2)
	assert.Equal(t, identity.Abandoned, goals[0].Status)
	assert.Equal(t, existence.InterruptedByHost, goals[0].Outcome)
	assert.Equal(t, "answer the person", goals[1].Objective)
	p := f.model.Requests()[1].Messages[0].Content
	assert.Contains(t, p, "A PERSON SAID:\nCedar, what are you doing?")
	assert.Empty(t, a.State().Host, "reading the host message empties it")
}

func TestInboxEmptiedOnlyWhenTheModelRead(t *testing.T) {
	f := newFixture(llmtest.Reply{Err: llm.StatusError{Provider: "ollama", StatusCode: 400}}, goalReply(t, "reply to Cipher"))
	a := f.agent(t, existence.Config{Timing: existence.TimingConfig{MaxCycles: 2}})
	ctx := context.Background()
	require.NoError(t, a.DeliverToInbox(ctx, identity.AgentMessage{From: "Cipher", Text: "I found a bug in your map"}))
	tick(t, a) // fallback: the model never read the message
	assert.Len(t, a.State().Inbox, 1)
	f.clock.Advance(6 * time.Second)
	tick(t, a)
	assert.Empty(t, a.State().Inbox)
	assert.Contains(t, f.model.Requests()[1].Messages[0].Content, "MESSAGES FROM YOUR PEERS:\n  [Cipher]: I found a bug in your map")
}

func TestCrisisTellsPeersAndResetsAfterThreeCycles(t *testing.T) {
	clock := existencetest.NewClock(t0)
	rec := &existencetest.Recorder{}
	store := memstore.New()
	ctx := context.Background()

	// Cedar starts in crisis: five stressors at 0.19 each, load 0.95.
	st := &identity.AgentState{Identity: identity.New("scout", "Cedar", t0)}
	for i := range 5 {
		_, err := st.Suffering.Add(t0, suffering.Input{Type: fmt.Sprintf("s%d", i), Description: "d", Condition: "c", Severity: 0.19})
		require.NoError(t, err)
	}
	st.Suffering.LastEscalated = t0
	require.NoError(t, store.Save(ctx, st))

	r, err := runner.New(runner.Config{Store: store, Clock: clock, Observer: rec.Observe})
	require.NoError(t, err)
	t.Cleanup(func() { r.Close() })
	fake := llmtest.NewFake(goalReply(t, "examine myself"))
	fake.Repeat = true
	cedar, err := r.Add(ctx, existence.Config{ID: "scout", Name: "Cedar", Model: fake, Calls: existence.CallConfig{Retry: middleware.RetryPolicy{Attempts: 1}}})
	require.NoError(t, err)
	cipher, err := r.Add(ctx, existence.Config{ID: "analyst", Name: "Cipher", Model: llmtest.NewFake(), Executor: blockingExecutor(), Timing: existence.TimingConfig{MaxCycles: 0}})
	require.NoError(t, err)
	_ = cipher

	for i := range 3 {
		tick(t, cedar)
		clock.Advance(6 * time.Second)
		if i < 2 {
			assert.Len(t, rec.Kind(event.CrisisReset), 0)
		}
	}
	assert.Len(t, rec.Kind(event.Crisis), 3)
	resets := rec.Kind(event.CrisisReset)
	require.Len(t, resets, 1)
	assert.Equal(t, "scout", resets[0].AgentID)
	assert.Empty(t, cedar.State().Suffering.Active)
	assert.Len(t, cedar.State().Suffering.Resolved, 5)

	inbox := r.Agent("analyst").State().Inbox
	require.Len(t, inbox, 1, "entering crisis tells each peer once")
	assert.Equal(t, "Cedar", inbox[0].From)
	assert.Equal(t, "I am in crisis (suffering 0.95/1.0). Active stressors: s0, s1, s2, s3, s4. I am stepping back from goals until my load drops.", inbox[0].Text)
}

func TestRunnerPeersSection(t *testing.T) {
	clock := existencetest.NewClock(t0)
	store := memstore.New()
	ctx := context.Background()
	for id, name := range map[string]string{"analyst": "Cipher", "builder": "Vault"} {
		st := &identity.AgentState{Identity: identity.New(id, name, t0)}
		st.Identity.Narrative = name + " " + strings.Repeat("n", 300)
		require.NoError(t, store.Save(ctx, st))
	}
	r, err := runner.New(runner.Config{Store: store, Clock: clock})
	require.NoError(t, err)
	t.Cleanup(func() { r.Close() })
	var agents []*existence.Agent
	for _, m := range [][2]string{{"scout", "Cedar"}, {"analyst", "Cipher"}, {"builder", "Vault"}} {
		a, err := r.Add(ctx, existence.Config{ID: m[0], Name: m[1], Model: llmtest.NewFake()})
		require.NoError(t, err)
		agents = append(agents, a)
	}
	_, err = r.Add(ctx, existence.Config{ID: "scout", Name: "Again", Model: llmtest.NewFake()})
	require.Error(t, err, "duplicate id")

	p, err := agents[0].Preview(ctx)
	require.NoError(t, err)
	want := "YOUR PEERS:\n  Cipher: Cipher " + strings.Repeat("n", 150-7) + "\n  Vault: Vault " + strings.Repeat("n", 150-6)
	assert.Contains(t, p.Text, want)
	assert.NotContains(t, p.Text, "  Cedar:")
}

func TestRunnerBoundsModelCallsInFlight(t *testing.T) {
	store := memstore.New()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r, err := runner.New(runner.Config{Store: store, MaxInFlight: 1, Clock: existencetest.NewClock(t0)})
	require.NoError(t, err)
	t.Cleanup(func() { r.Close() })

	var mu sync.Mutex
	inFlight, peak := 0, 0
	entered := make(chan struct{}, 3)
	release := make(chan struct{})
	model := llmtest.Func(func(ctx context.Context, req *llm.Request) (*llm.Response, error) {
		mu.Lock()
		inFlight++
		peak = max(peak, inFlight)
		mu.Unlock()
		entered <- struct{}{}
		<-release
		mu.Lock()
		inFlight--
		mu.Unlock()
		return &llm.Response{Text: `{"action":"goal","content":"g","reasoning":"r"}`}, nil
	})
	var wg sync.WaitGroup
	for _, id := range []string{"a1", "a2", "a3"} {
		a, err := r.Add(ctx, existence.Config{ID: id, Name: id, Model: model, Executor: blockingExecutor()})
		require.NoError(t, err)
		wg.Add(1)
		go func() { defer wg.Done(); a.Tick(ctx) }()
	}
	for range 3 {
		<-entered
		release <- struct{}{}
	}
	wg.Wait()
	assert.Equal(t, 1, peak)
}

func TestRestartResumesGoalAndEscalatesAcrossDowntime(t *testing.T) {
	dir := t.TempDir()
	store, err := filestore.Open(dir, filestore.Options{})
	require.NoError(t, err)
	clock := existencetest.NewClock(t0)
	ctx := context.Background()
	cfg := existence.Config{ID: "scout", Name: "Cedar", Store: store, Timing: existence.TimingConfig{Clock: clock}, Model: llmtest.NewFake(goalReply(t, "long goal")), Executor: blockingExecutor(), Calls: existence.CallConfig{Retry: middleware.RetryPolicy{Attempts: 1}}}

	a, err := existence.New(ctx, cfg)
	require.NoError(t, err)
	require.NoError(t, a.Tick(ctx))
	st := a.State()
	_, err = st.Suffering.Add(t0, suffering.Input{Type: "futility", Description: "d", Condition: "c"})
	require.NoError(t, err)
	require.NoError(t, a.Close())
	require.NoError(t, store.Save(ctx, st))

	// A second process cannot run the same agent while the first holds it.
	a1, err := existence.New(ctx, cfg)
	require.NoError(t, err)
	_, err = existence.New(ctx, cfg)
	require.ErrorIs(t, err, identity.ErrLocked)
	require.NoError(t, a1.Close())

	// Two days later.
	clock.Advance(48 * time.Hour)
	started := make(chan identity.Goal, 1)
	cfg.Executor = existence.ExecutorFunc(func(ctx context.Context, asg existence.Assignment) (existence.Outcome, error) {
		started <- asg.Goal
		<-ctx.Done()
		return existence.Outcome{}, ctx.Err()
	})
	cfg.Model = llmtest.NewFake() // any model call would fail the test below
	b, err := existence.New(ctx, cfg)
	require.NoError(t, err)
	defer b.Close()
	require.NoError(t, b.Tick(ctx))
	g := <-started
	assert.Equal(t, "long goal", g.Objective, "the active goal resumes")
	assert.Equal(t, 0, cfg.Model.(*llmtest.Fake).Calls())
	sev := b.State().Suffering.Active[0].Severity
	assert.InDelta(t, 0.20+2*0.025, sev, 1e-9, "two days of futility at 0.025/day")
}

// TestCorruptStateIsNotReplaced: a corrupt document, or a corrupt end of
// its journal, stops New with an error naming the file; FreshOnCorrupt
// moves the files aside and starts fresh.
func TestCorruptStateIsNotReplaced(t *testing.T) {
	for _, tc := range []struct {
		name    string
		file    string // the file the error names
		corrupt func(t *testing.T, store *filestore.Store)
		kept    []string // prefixes of the files moved aside
	}{
		{"document", "scout.json", func(t *testing.T, store *filestore.Store) {
			require.NoError(t, writeFile(store.Path("scout"), `{"schema_version": 1, "state": {"identity": {"agent_id": "scout", "name": 5}}}`))
		}, []string{"scout.json.corrupt-"}},
		{"journal", "scout.journal", func(t *testing.T, store *filestore.Store) {
			ctx := context.Background()
			st := &identity.AgentState{Identity: identity.New("scout", "Old name", time.Time{})}
			require.NoError(t, store.Save(ctx, st))
			require.NoError(t, store.Save(ctx, st))
			require.NoError(t, writeFile(store.JournalPath("scout"), "bad\nbad\n"))
		}, []string{"scout.json.corrupt-", "scout.journal.corrupt-"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			store, err := filestore.Open(dir, filestore.Options{})
			require.NoError(t, err)
			tc.corrupt(t, store)
			cfg := newFixture().config(existence.Config{Store: store})

			_, err = existence.New(context.Background(), cfg)
			require.ErrorIs(t, err, identity.ErrCorrupt)
			assert.Contains(t, err.Error(), filepath.Join(dir, tc.file))

			cfg.FreshOnCorrupt = true
			a, err := existence.New(context.Background(), cfg)
			require.NoError(t, err)
			defer a.Close()
			assert.Equal(t, "Cedar", a.State().Identity.Name)
			entries, err := readDir(dir)
			require.NoError(t, err)
			for _, p := range tc.kept {
				assert.True(t, hasPrefix(entries, p), "corrupt file kept aside as %s*: %v", p, entries)
			}
		})
	}
}

func TestAssignedTaskBecomesTheGoal(t *testing.T) {
	ctx := context.Background()
	f := newFixture(goalReply(t, "something self-directed"))
	q := taskqueue.NewMemory(taskqueue.Options{Now: f.clock.Now})
	tk, err := q.Submit(ctx, "summarise design/ in one page", "scout")
	require.NoError(t, err)
	a := f.agent(t, existence.Config{Tasks: q, Timing: existence.TimingConfig{MaxCycles: 1}})

	tick(t, a)
	p := f.model.Requests()[0].Messages[0].Content
	assert.True(t, strings.HasPrefix(p, "ASSIGNED TASK: summarise design/ in one page\n"), "task at the very top:\n%s", p[:100])
	g := a.State().Identity.Goals[0]
	assert.Equal(t, "summarise design/ in one page", g.Objective)
	assert.Equal(t, tk.ID, g.TaskID)

	require.NoError(t, a.Tick(ctx)) // records DONE and finishes the task
	got, err := q.Get(ctx, tk.ID)
	require.NoError(t, err)
	assert.Equal(t, task.Completed, got.Status)
	assert.Equal(t, "completed: summarise design/ in one page", got.Result)
}

func TestPreviewIsPureAndMatchesWhatIsSent(t *testing.T) {
	f := newFixture(goalReply(t, "g"))
	a := f.agent(t, existence.Config{Executor: blockingExecutor()})
	ctx := context.Background()
	p1, err := a.Preview(ctx)
	require.NoError(t, err)
	p2, err := a.Preview(ctx)
	require.NoError(t, err)
	assert.Equal(t, p1.Text, p2.Text)
	require.NoError(t, a.Tick(ctx))
	assert.Equal(t, p1.Text, f.model.Requests()[0].Messages[0].Content)
}

// runObserved starts a.Run and returns a channel of the goals it chooses.
func chosenGoals(cfg *existence.Config) <-chan string {
	ch := make(chan string, 16)
	cfg.Observer = func(e event.Event) {
		if e.Kind == event.GoalChosen {
			ch <- e.Text
		}
	}
	return ch
}

func TestRunTicksEveryHeartbeatUntilCanceledAndSaves(t *testing.T) {
	f := newFixture(goalReply(t, "g1"), goalReply(t, "g2"), goalReply(t, "g3"))
	cfg := f.config(existence.Config{})
	chosen := chosenGoals(&cfg)
	a, err := existence.New(context.Background(), cfg)
	require.NoError(t, err)
	defer a.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- a.Run(ctx) }()

	// The first tick is immediate; every heartbeat after the goal ended
	// runs the next cycle.
	assert.Equal(t, "g1", <-chosen)
	require.NoError(t, a.WaitGoal(ctx))
	f.clock.Advance(existence.DefaultHeartbeat)
	assert.Equal(t, "g2", <-chosen)
	cancel()
	require.NoError(t, <-done)

	stored, err := f.store.Load(context.Background(), "scout")
	require.NoError(t, err)
	require.Len(t, stored.Identity.Goals, 2)
	assert.Equal(t, identity.Done, stored.Identity.Goals[0].Status)
	assert.Equal(t, "g2", stored.Identity.Goals[1].Objective)
}

func TestRunStopsAfterMaxCycles(t *testing.T) {
	f := newFixture(goalReply(t, "g1"), goalReply(t, "g2"))
	cfg := f.config(existence.Config{Timing: existence.TimingConfig{MaxCycles: 2, Heartbeat: time.Hour}})
	chosen := chosenGoals(&cfg)
	a, err := existence.New(context.Background(), cfg)
	require.NoError(t, err)
	defer a.Close()
	done := make(chan error)
	go func() { done <- a.Run(context.Background()) }()

	assert.Equal(t, "g1", <-chosen)
	require.NoError(t, a.WaitGoal(context.Background()))
	f.clock.Advance(time.Hour)
	assert.Equal(t, "g2", <-chosen)
	require.NoError(t, <-done, "Run returns once the last goal has ended")
	goals := a.State().Identity.Goals
	require.Len(t, goals, 2)
	assert.Equal(t, identity.Done, goals[1].Status)
	assert.Equal(t, 2, f.model.Calls())
}

func writeFile(path, content string) error { return os.WriteFile(path, []byte(content), 0o600) }

func readDir(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names, err
}

func hasPrefix(names []string, prefix string) bool {
	for _, n := range names {
		if strings.HasPrefix(n, prefix) {
			return true
		}
	}
	return false
}

func TestNewValidatesConfig(t *testing.T) {
	ctx := context.Background()
	_, err := existence.New(ctx, existence.Config{ID: "scout", Name: "Cedar"})
	assert.ErrorContains(t, err, "Model")
	_, err = existence.New(ctx, existence.Config{ID: "../etc", Name: "x", Model: llmtest.NewFake()})
	assert.ErrorIs(t, err, identity.ErrInvalidID)
	_, err = existence.New(ctx, existence.Config{Name: "x", Model: llmtest.NewFake()})
	assert.Error(t, err)
}

func TestOverCapStoredStateIsTrimmedAndReported(t *testing.T) {
	f := newFixture()
	st := &identity.AgentState{Identity: identity.New("scout", "Cedar", t0)}
	for i := range 30 {
		st.Identity.Opinions = append(st.Identity.Opinions, identity.Opinion{Text: fmt.Sprint(i), Domain: "d"})
	}
	for i := range 7 {
		st.Suffering.Active = append(st.Suffering.Active, suffering.Stressor{Type: fmt.Sprint("T", i), Severity: 0.1, Peak: 0.1, RatePerDay: 0.03})
	}
	require.NoError(t, f.store.Save(context.Background(), st))
	a := f.agent(t, existence.Config{})
	assert.Len(t, a.State().Identity.Opinions, 20)
	assert.Len(t, a.State().Suffering.Active, 5)
	assert.Len(t, a.State().Suffering.Resolved, 2, "demoted stressors are kept in the history")
	tr := f.rec.Kind(event.StateTrimmed)
	require.Len(t, tr, 1)
	assert.Contains(t, tr[0].Text, "opinions: 30 → 20")
	assert.Contains(t, tr[0].Text, "active stressors: 7 → 5")
}

func TestEventString(t *testing.T) {
	e := event.Event{Kind: event.GoalChosen, Time: t0, Agent: "Cedar", Text: "map\nthe workspace", Reasoning: "curiosity"}
	assert.Equal(t, "12:00:00 Cedar 🎯 map the workspace — why: curiosity", e.String())
	e = event.Event{Kind: event.Worldview, Time: t0, Agent: "Vault", Text: "files are memory"}
	assert.Equal(t, "12:00:00 Vault 🧠 files are memory", e.String())
	// Texts from models and tools reach terminals: escape sequences,
	// carriage returns and bidirectional controls are removed.
	e = event.Event{Kind: event.Worldview, Time: t0, Agent: "Va\u202eult", Text: "ok\x1b[2J\rfine \u2067evil\u2069 \x07"}
	assert.Equal(t, "12:00:00 Vault 🧠 ok[2J fine evil ", e.String())
	b, err := json.Marshal(event.Event{Kind: event.Fallback, AgentID: "scout", Agent: "Cedar", Error: "x"})
	require.NoError(t, err)
	assert.JSONEq(t, `{"kind":"fallback","time":"0001-01-01T00:00:00Z","agent_id":"scout","agent":"Cedar","error":"x"}`, string(b))
}

// blockingExecutor pursues goals until canceled.
func blockingExecutor() existence.Executor {
	return existence.ExecutorFunc(func(ctx context.Context, a existence.Assignment) (existence.Outcome, error) {
		<-ctx.Done()
		return existence.Outcome{}, ctx.Err()
	})
}

func TestPromptBudgetCutsAreReported(t *testing.T) {
	f := newFixture(goalReply(t, "g"))
	st := &identity.AgentState{Identity: identity.New("scout", "Cedar", t0)}
	for i := range 20 {
		st.Identity.AddDiscovery(identity.Discovery{Text: fmt.Sprintf("discovery %d: %s", i, strings.Repeat("x", 200))}, identity.Limits{})
	}
	require.NoError(t, f.store.Save(context.Background(), st))
	full, err := prompt.New(prompt.Config{}).Assemble(&prompt.View{Now: t0, Identity: &st.Identity})
	require.NoError(t, err)
	budget := prompt.Budget{MaxChars: full.Chars - 300}
	a := f.agent(t, existence.Config{Prompt: prompt.New(prompt.Config{Budget: budget}), Executor: blockingExecutor()})
	require.NoError(t, a.Tick(context.Background()))

	sent := f.model.Requests()[0].Messages[0].Content
	assert.LessOrEqual(t, len([]rune(sent)), budget.MaxChars, "the budget holds")
	assert.Contains(t, sent, prompt.CutMarker)
	cuts := f.rec.Kind(event.PromptCut)
	require.NotEmpty(t, cuts)
	assert.Contains(t, cuts[0].Text, "discoveries")
}

func TestDefaults(t *testing.T) {
	assert.Equal(t, 6*time.Second, existence.DefaultHeartbeat, "spec §1")
	assert.Equal(t, 180*time.Second, middleware.DefaultTimeout, "spec §7")
}

func TestHostMessageDuringOutageDoesNotInterruptEveryGoal(t *testing.T) {
	down := llmtest.Reply{Err: &llm.UnavailableError{Provider: "ollama", Err: errors.New("connection refused")}}
	f := newFixture(goalReply(t, "slow goal"), down, down, down, goalReply(t, "answer both people"))
	a := f.agent(t, existence.Config{Executor: blockingExecutor()})
	ctx := context.Background()
	require.NoError(t, a.Tick(ctx)) // slow goal
	require.NoError(t, a.SayAsHost(ctx, "first message"))
	require.NoError(t, a.Tick(ctx)) // interrupts; the model is down: fallback
	for range 3 {
		f.clock.Advance(6 * time.Second)
		require.NoError(t, a.Tick(ctx)) // the unread message must not interrupt the fallback goal again
	}
	goals := a.State().Identity.Goals
	require.Len(t, goals, 2, "one interruption, then the fallback goal runs")
	assert.True(t, goals[1].Fallback)
	assert.Equal(t, identity.Active, goals[1].Status)
	assert.Len(t, a.State().Host, 1, "the unread message is kept")

	// A new message interrupts; the next cycle shows both.
	require.NoError(t, a.SayAsHost(ctx, "second message"))
	require.NoError(t, a.Tick(ctx)) // model still down
	require.NoError(t, a.SayAsHost(ctx, "third message"))
	require.NoError(t, a.Tick(ctx)) // down again
	require.NoError(t, a.SayAsHost(ctx, "fourth message"))
	require.NoError(t, a.Tick(ctx)) // answers
	last := f.model.Requests()[f.model.Calls()-1].Messages[0].Content
	assert.Contains(t, last, "A PERSON SAID:\nfirst message")
	assert.Contains(t, last, "fourth message")
	assert.Empty(t, a.State().Host)

	// Interruptions by a person are not the agent failing.
	o := existence.GoalEvidence(&a.State().Identity)
	assert.Equal(t, 0, o.Failed)
	assert.Empty(t, a.State().Suffering.Active)
}

type failingStore struct {
	*memstore.Store
	fail bool
}

func (s *failingStore) Save(ctx context.Context, st *identity.AgentState) error {
	if s.fail {
		return errors.New("disk full")
	}
	return s.Store.Save(ctx, st)
}

func TestSaveFailureDoesNotStopTheLoop(t *testing.T) {
	f := newFixture(goalReply(t, "g1"), goalReply(t, "g2"))
	store := &failingStore{Store: memstore.New()}
	a := f.agent(t, existence.Config{Store: store, Timing: existence.TimingConfig{MaxCycles: 2}})
	store.fail = true
	ctx := context.Background()
	err := a.Tick(ctx)
	require.ErrorContains(t, err, "disk full")
	require.NoError(t, a.WaitGoal(ctx))
	f.clock.Advance(6 * time.Second)
	require.Error(t, a.Tick(ctx))
	assert.Equal(t, 2, a.Cycles(), "cycles go on although nothing can be saved")
	assert.NotEmpty(t, f.rec.Kind(event.Error))
	store.fail = false
	require.NoError(t, a.WaitGoal(ctx))
	f.clock.Advance(6 * time.Second)
	require.NoError(t, a.Tick(ctx))
	st, err := store.Load(ctx, "scout")
	require.NoError(t, err)
	assert.Len(t, st.Identity.Goals, 2, "everything is saved once the store works again")
}

func TestMessagesArrivingDuringTheModelCallAreKept(t *testing.T) {
	var a *existence.Agent
	model := llmtest.Func(func(ctx context.Context, req *llm.Request) (*llm.Response, error) {
		// A peer writes while the model is thinking.
		require.NoError(t, a.DeliverToInbox(ctx, identity.AgentMessage{From: "Vault", Text: "late news"}))
		return &llm.Response{Text: `{"action":"goal","content":"g","reasoning":"r"}`}, nil
	})
	f := newFixture()
	a = f.agent(t, existence.Config{Model: model, Executor: blockingExecutor()})
	require.NoError(t, a.DeliverToInbox(context.Background(), identity.AgentMessage{From: "Cipher", Text: "early news"}))
	require.NoError(t, a.Tick(context.Background()))
	inbox := a.State().Inbox
	require.Len(t, inbox, 1, "only what the model read is emptied")
	assert.Equal(t, "late news", inbox[0].Text)
}

func TestSelfReportCannotResolveAssessedStressors(t *testing.T) {
	st := &identity.AgentState{Identity: identity.New("scout", "Cedar", t0)}
	for _, typ := range []string{suffering.RepeatedFailure, "fear_of_heights"} {
		_, err := st.Suffering.Add(t0, suffering.Input{Type: typ, Description: "d", Condition: "c"})
		require.NoError(t, err)
	}
	r := &prompt.Response{Content: "g", SufferingAssessment: &prompt.SufferingAssessment{Resolved: []prompt.Resolution{
		{Type: "Repeated Failure", Reason: "I feel better"},
		{Type: "fear of heights", Reason: "I climbed"},
	}}}
	evs := existence.Apply(st, r, t0, identity.Limits{})
	_, stillActive := st.Suffering.Find(suffering.RepeatedFailure)
	assert.True(t, stillActive, "only observable behaviour resolves repeated_failure (spec §4)")
	_, ok := st.Suffering.Find("fear_of_heights")
	assert.False(t, ok)
	var kinds []event.Kind
	for _, e := range evs {
		kinds = append(kinds, e.Kind)
	}
	assert.Equal(t, []event.Kind{event.StressorDropped, event.StressorResolved}, kinds)
}

func TestOutcomeDiscoveriesAndArtifacts(t *testing.T) {
	f := newFixture(goalReply(t, "write a map"), goalReply(t, "read the map"))
	n := 0
	exec := existence.ExecutorFunc(func(ctx context.Context, a existence.Assignment) (existence.Outcome, error) {
		n++
		if n == 1 {
			return existence.Outcome{Status: identity.Done, Summary: "wrote it", Artifacts: []string{"scout/map.md", "scout/map.md"}}, nil
		}
		return existence.Outcome{Status: identity.Done, Summary: "read it", Discoveries: []identity.Discovery{{Text: `scout/map.md: "# Map"`, Source: "scout/map.md"}}}, nil
	})
	a := f.agent(t, existence.Config{Executor: exec, Timing: existence.TimingConfig{MaxCycles: 2}})
	tick(t, a)
	f.clock.Advance(time.Minute)
	tick(t, a)
	f.clock.Advance(time.Minute)
	require.NoError(t, a.Tick(context.Background()))

	id := a.State().Identity
	assert.Equal(t, []string{"scout/map.md"}, id.Goals[0].Artifacts)
	require.Len(t, id.Discoveries, 1)
	assert.Equal(t, t0.Add(2*time.Minute), id.Discoveries[0].At)
	o := existence.GoalEvidence(&id)
	assert.Equal(t, 1, o.Artifacts)
	assert.Equal(t, 1, o.ArtifactsUsed, "the map was read after it was written")
	p, err := a.Preview(context.Background())
	require.NoError(t, err)
	assert.Contains(t, p.Text, "WHAT YOU'VE FOUND OUTSIDE:\n")
	assert.Contains(t, p.Text, `scout/map.md: "# Map"`)
}

func TestObserveCountsTheLastTenEndedGoals(t *testing.T) {
	id := identity.New("scout", "Cedar", t0)
	l := identity.Limits{}
	end := func(status identity.GoalStatus, outcome string) {
		require.NoError(t, id.StartGoal(identity.Goal{Objective: "g", Started: t0}, l))
		_, err := id.EndGoal(status, outcome, t0, l)
		require.NoError(t, err)
	}
	for range 5 {
		end(identity.Done, "ok") // outside the window
	}
	for range 6 {
		end(identity.Failed, "broke")
	}
	end(identity.Abandoned, existence.InterruptedByHost) // not counted
	for range 4 {
		end(identity.Abandoned, "stalled")
	}
	require.NoError(t, id.StartGoal(identity.Goal{Objective: "active"}, l))
	o := existence.GoalEvidence(&id)
	assert.Equal(t, suffering.Evidence{Completed: 0, Failed: 10, Stalled: 4}, o)
}

func TestLongGoalTextIsCapped(t *testing.T) {
	long := strings.Repeat("word ", 50000)
	f := newFixture(goalReply(t, long))
	a := f.agent(t, existence.Config{Executor: blockingExecutor()})
	require.NoError(t, a.Tick(context.Background()))
	g := a.State().Identity.ActiveGoal()
	assert.Equal(t, identity.DefaultLimits().EntryChars, len([]rune(g.Objective)))
}

func TestGoalTimeoutEndsTheExecutorsContext(t *testing.T) {
	f := newFixture(goalReply(t, "endless"))
	var deadline time.Time
	exec := existence.ExecutorFunc(func(ctx context.Context, a existence.Assignment) (existence.Outcome, error) {
		deadline, _ = ctx.Deadline()
		return existence.Outcome{Status: identity.Done}, nil
	})
	before := time.Now()
	a := f.agent(t, existence.Config{Executor: exec, Timing: existence.TimingConfig{GoalTimeout: time.Hour}})
	tick(t, a)
	assert.WithinDuration(t, before.Add(time.Hour), deadline, time.Minute)
}

// TestCustomSectionRunsOutsideTheLock checks the two ways a cycle
// assembles its prompt: built-in sections under the agent's lock, from the
// state itself; a custom section outside it, from a copy. A custom
// section that takes the agent's lock (Status) must get it, and both ways
// must send the prompt that Preview shows.
func TestCustomSectionRunsOutsideTheLock(t *testing.T) {
	for _, custom := range []bool{false, true} {
		t.Run(fmt.Sprintf("custom=%v", custom), func(t *testing.T) {
			f := newFixture(goalReply(t, "map the workspace"))
			asm := prompt.New(prompt.Config{})
			var a *existence.Agent
			var underLock atomic.Bool
			if custom {
				require.NoError(t, asm.InsertAfter(prompt.SectionTime, prompt.SectionFunc{ID: "status", Text: func(*prompt.View) string {
					got := make(chan int, 1)
					go func() { got <- a.Status().Cycles }() // takes the agent's lock
					select {
					case n := <-got:
						return fmt.Sprint("CYCLES: ", n)
					case <-time.After(10 * time.Second): // only bounds a failure
						underLock.Store(true)
						return "LOCKED"
					}
				}}))
			}
			a = f.agent(t, existence.Config{Prompt: asm, Executor: blockingExecutor()})
			want, err := a.Preview(context.Background())
			require.NoError(t, err)

			require.NoError(t, a.Tick(context.Background()))
			require.False(t, underLock.Load(), "the custom section ran under the agent's lock")
			sent := f.model.Requests()[0].Messages[0].Content
			assert.Equal(t, want.Text, sent)
			if custom {
				assert.Contains(t, sent, "CYCLES: 0")
			}
		})
	}
}

func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }
