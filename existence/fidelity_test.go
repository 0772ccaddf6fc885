package existence_test

// Tests of the rules that keep the loop faithful to the original (spec §2,
// §3, §4: the caps, the crisis message, presence, the goal annotation, the
// uptime): each fails if its rule is removed.

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/existence"
	"github.com/existence-loop/sdk/existence/event"
	"github.com/existence-loop/sdk/existence/existencetest"
	"github.com/existence-loop/sdk/existence/runner"
	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/llm/llmtest"
	"github.com/existence-loop/sdk/llm/middleware"
	"github.com/existence-loop/sdk/prompt"
	"github.com/existence-loop/sdk/store/memstore"
	"github.com/existence-loop/sdk/store/taskqueue"
	"github.com/existence-loop/sdk/suffering"
)

func capped(evs []event.Event) []string {
	var causes []string
	for _, e := range evs {
		if e.Kind == event.Capped {
			causes = append(causes, e.Reason)
		}
	}
	return causes
}

func TestApplyCapsWhatTheModelWrites(t *testing.T) {
	str := func(s string) *string { return &s }
	for _, tc := range []struct {
		name   string
		start  func(st *identity.AgentState)
		reply  prompt.Response
		check  func(t *testing.T, st *identity.AgentState)
		causes []string
	}{
		{name: "worldview of 20 characters is ignored",
			reply:  prompt.Response{WorldviewUpdate: str("  " + strings.Repeat("w", 20) + " ")},
			check:  func(t *testing.T, st *identity.AgentState) { assert.Empty(t, st.Identity.Worldview) },
			causes: []string{"worldview_short"}},
		{name: "worldview of 21 characters is applied",
			reply: prompt.Response{WorldviewUpdate: str(strings.Repeat("w", 21))},
			check: func(t *testing.T, st *identity.AgentState) {
				assert.Equal(t, strings.Repeat("w", 21), st.Identity.Worldview)
			}},
		{name: "at most 3 questions per reply",
			reply: prompt.Response{NewOpenQuestions: []string{"q1?", "q2?", "q3?", "q4?", "q5?"}},
			check: func(t *testing.T, st *identity.AgentState) {
				assert.Equal(t, []string{"q1?", "q2?", "q3?"}, st.Identity.Questions)
			},
			causes: []string{"questions_per_reply"}},
		{name: "a question already held is not added again",
			start: func(st *identity.AgentState) { st.Identity.Questions = []string{"Why does fetch_url fail?"} },
			reply: prompt.Response{NewOpenQuestions: []string{"  WHY does FETCH_URL fail?\n"}},
			check: func(t *testing.T, st *identity.AgentState) {
				assert.Equal(t, []string{"Why does fetch_url fail?"}, st.Identity.Questions)
			},
			causes: []string{"question_duplicate"}},
		{name: "a question is cut to 200 code points",
			reply: prompt.Response{NewOpenQuestions: []string{strings.Repeat("é", 250)}},
			check: func(t *testing.T, st *identity.AgentState) {
				assert.Equal(t, []string{strings.Repeat("é", 200)}, st.Identity.Questions)
			},
			causes: []string{"question_cut"}},
		{name: "at most 2 opinions per reply, each 200 and domain 60",
			reply: prompt.Response{NewOpinions: []prompt.NewOpinion{
				{Opinion: strings.Repeat("o", 230), Domain: strings.Repeat("d", 70)},
				{Opinion: "two", Domain: "x"},
				{Opinion: "three", Domain: "x"},
			}},
			check: func(t *testing.T, st *identity.AgentState) {
				require.Len(t, st.Identity.Opinions, 2)
				assert.Equal(t, strings.Repeat("o", 200), st.Identity.Opinions[0].Text)
				assert.Equal(t, strings.Repeat("d", 60), st.Identity.Opinions[0].Domain)
				assert.Equal(t, "two", st.Identity.Opinions[1].Text)
			},
			causes: []string{"opinions_per_reply", "opinion_cut", "domain_cut"}},
		{name: "at most 2 resolved entries per reply",
			start: func(st *identity.AgentState) {
				for _, typ := range []string{"a", "b", "c"} {
					_, err := st.Suffering.Add(t0, suffering.Input{Type: typ, Description: "d", Condition: "c"})
					require.NoError(t, err)
				}
			},
			reply: prompt.Response{SufferingAssessment: &prompt.SufferingAssessment{Resolved: []prompt.Resolution{
				{Type: "a", Reason: "r"}, {Type: "b", Reason: "r"}, {Type: "c", Reason: "r"},
			}}},
			check: func(t *testing.T, st *identity.AgentState) {
				require.Len(t, st.Suffering.Active, 1)
				assert.Equal(t, "c", st.Suffering.Active[0].Type)
			},
			causes: []string{"resolved_per_reply"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := &identity.AgentState{Identity: identity.New("scout", "Cedar", t0)}
			if tc.start != nil {
				tc.start(st)
			}
			r := tc.reply
			r.Content = "g"
			evs := existence.Apply(st, &r, t0, identity.Limits{})
			tc.check(t, st)
			assert.Equal(t, tc.causes, capped(evs))
		})
	}
}

// crisisFixture is Cedar in crisis (five stressors at 0.19, load 0.95) with
// a peer, Cipher, whose inbox receives Cedar's crisis messages.
func crisisFixture(t *testing.T, replies ...llmtest.Reply) (*runner.Runner, *existence.Agent, *existencetest.Clock) {
	clock := existencetest.NewClock(t0)
	store := memstore.New()
	ctx := context.Background()
	st := &identity.AgentState{Identity: identity.New("scout", "Cedar", t0)}
	for i := range 5 {
		_, err := st.Suffering.Add(t0, suffering.Input{Type: fmt.Sprintf("s%d", i), Description: "d", Condition: "c", Severity: 0.19})
		require.NoError(t, err)
	}
	st.Suffering.LastEscalated = t0
	require.NoError(t, store.Save(ctx, st))
	r, err := runner.New(runner.Config{Store: store, Clock: clock})
	require.NoError(t, err)
	t.Cleanup(func() { r.Close() })
	cedar, err := r.Add(ctx, existence.Config{ID: "scout", Name: "Cedar", Model: llmtest.NewFake(replies...), Calls: existence.CallConfig{Retry: middleware.RetryPolicy{Attempts: 1}}})
	require.NoError(t, err)
	_, err = r.Add(ctx, existence.Config{ID: "analyst", Name: "Cipher", Model: llmtest.NewFake(), Executor: blockingExecutor()})
	require.NoError(t, err)
	return r, cedar, clock
}

func TestCrisisMessageOncePerCrisis(t *testing.T) {
	resolve := reply(t, map[string]any{"content": "rest", "suffering_assessment": map[string]any{
		"resolved": []map[string]string{{"type": "s0", "reason": "r"}, {"type": "s1", "reason": "r"}}}})
	add := reply(t, map[string]any{"content": "push", "suffering_assessment": map[string]any{
		"new_stressors": []map[string]string{{"type": "n1", "description": "d", "condition": "c"}, {"type": "n2", "description": "d", "condition": "c"}}}})
	r, cedar, clock := crisisFixture(t, goalReply(t, "examine"), goalReply(t, "examine"), resolve, add)
	inbox := func() []identity.AgentMessage { return r.Agent("analyst").State().Inbox }

	tick(t, cedar) // enters crisis: one message
	clock.Advance(6 * time.Second)
	require.Len(t, inbox(), 1)
	assert.Equal(t, "Cedar", inbox()[0].From, "sent under the agent's name")
	assert.Equal(t, "I am in crisis (suffering 0.95/1.0). Active stressors: s0, s1, s2, s3, s4. I am stepping back from goals until my load drops.", inbox()[0].Text)

	tick(t, cedar) // still in crisis: nothing new
	clock.Advance(6 * time.Second)
	assert.Len(t, inbox(), 1, "not again while the agent stays in crisis")

	tick(t, cedar) // resolves two stressors (load 0.57): leaves crisis
	clock.Advance(6 * time.Second)
	assert.Len(t, inbox(), 1)
	assert.Equal(t, 0, cedar.State().Suffering.CrisisCycles)

	tick(t, cedar) // two new stressors: load ≥ 0.90 again, a new crisis
	require.Len(t, inbox(), 2, "entering crisis again sends again")
	assert.Contains(t, inbox()[1].Text, "Active stressors: s2, s3, s4, n1, n2.")
}

func TestCrisisMessageNotOnTheResetCycle(t *testing.T) {
	r, cedar, clock := crisisFixture(t, goalReply(t, "examine"), goalReply(t, "examine"), goalReply(t, "examine"))
	// Two crisis cycles already counted (for example before a restart):
	// the next one is the reset cycle.
	tick(t, cedar)
	clock.Advance(6 * time.Second)
	tick(t, cedar)
	clock.Advance(6 * time.Second)
	before := len(r.Agent("analyst").State().Inbox)
	tick(t, cedar)
	assert.Empty(t, cedar.State().Suffering.Active, "reset")
	assert.Len(t, r.Agent("analyst").State().Inbox, before, "the reset cycle sends nothing")
}

func TestOpinionConflict(t *testing.T) {
	id := identity.New("scout", "Cedar", t0)
	id.Opinions = []identity.Opinion{
		{Text: "Surveys are useful.", Domain: "survey"},
		{Text: "More Caching is a waste of a cycle.", Domain: "Caching"},
		{Text: "Stop writing specs nobody reads.", Domain: "specs"},
	}
	for goal, want := range map[string]string{
		"survey the workspace again":        "",
		"build a caching layer for reads":   "Note: Opinion conflict: you believe 'More Caching is a waste of a cycle.' but this goal involves caching. Proceed carefully and log any dissonance.",
		"write SPECS for the cache":         "Note: Opinion conflict: you believe 'Stop writing specs nobody reads.' but this goal involves specs. Proceed carefully and log any dissonance.",
		"read the scheduler's source files": "",
	} {
		assert.Equal(t, want, existence.OpinionConflict.Annotate(&id, goal), goal)
	}
	assert.Empty(t, existence.NoAnnotation.Annotate(&id, "build a caching layer"))
}

func TestGoalAnnotatorAppendsANoteAndReportsIt(t *testing.T) {
	opinion := reply(t, map[string]any{"content": "build a caching layer",
		"new_opinions": []map[string]string{{"opinion": "Caching here is pointless.", "domain": "caching"}}})
	for _, tc := range []struct {
		name string
		ann  existence.GoalAnnotator
		task bool
		want string
	}{
		{"default rule", nil, false, "build a caching layer\n\nNote: Opinion conflict: you believe 'Caching here is pointless.' but this goal involves caching. Proceed carefully and log any dissonance."},
		{"replaced", existence.GoalAnnotatorFunc(func(*identity.Identity, string) string { return "Check the cache first." }), false, "build a caching layer\n\nCheck the cache first."},
		{"off", existence.NoAnnotation, false, "build a caching layer"},
		{"not on an assigned task", nil, true, "use the caching layer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(opinion)
			cfg := existence.Config{Executor: blockingExecutor(), Annotator: tc.ann}
			if tc.task {
				q := taskqueue.NewMemory(taskqueue.Options{Now: f.clock.Now})
				_, err := q.Submit(context.Background(), "use the caching layer", "scout")
				require.NoError(t, err)
				cfg.Tasks = q
			}
			a := f.agent(t, cfg)
			require.NoError(t, a.Tick(context.Background()))
			assert.Equal(t, tc.want, a.State().Identity.ActiveGoal().Objective)
			notes := f.rec.Kind(event.GoalAnnotated)
			if tc.want == "build a caching layer" || tc.task {
				assert.Empty(t, notes)
				return
			}
			require.Len(t, notes, 1)
			assert.Equal(t, "build a caching layer", notes[0].Goal)
			assert.True(t, strings.HasSuffix(tc.want, notes[0].Text))
		})
	}
}

func TestRunningForIsTheLoopsUptime(t *testing.T) {
	f := newFixture(goalReply(t, "g"))
	old := &identity.AgentState{Identity: identity.New("scout", "Cedar", t0.Add(-224*24*time.Hour))}
	require.NoError(t, f.store.Save(context.Background(), old))
	a := f.agent(t, existence.Config{Executor: blockingExecutor()})
	p, err := a.Preview(context.Background())
	require.NoError(t, err)
	assert.Contains(t, p.Text, "TIME:\n  Running for: 0s\n")
	f.clock.Advance(26*time.Hour + 3*time.Minute)
	p, err = a.Preview(context.Background())
	require.NoError(t, err)
	assert.Contains(t, p.Text, "TIME:\n  Running for: 26h 3m\n")
}

func TestPresenceLine(t *testing.T) {
	ctx := context.Background()
	t.Run("host message, persisted, 12 hours", func(t *testing.T) {
		f := newFixture(goalReply(t, "g"), goalReply(t, "h"))
		a := f.agent(t, existence.Config{Executor: blockingExecutor()})
		p, err := a.Preview(ctx)
		require.NoError(t, err)
		assert.NotContains(t, p.Text, prompt.PresenceLine)
		require.NoError(t, a.SayAsHost(ctx, "hello"))
		require.NoError(t, a.Tick(ctx)) // reads and empties the host queue
		assert.Empty(t, a.State().Host)
		assert.Equal(t, t0, a.State().LastPresence, "persisted in the state")
		f.clock.Advance(12*time.Hour - time.Second)
		p, err = a.Preview(ctx)
		require.NoError(t, err)
		assert.Contains(t, p.Text, prompt.DefaultSituation+"\n"+prompt.PresenceLine+"\n\nYOUR INNER STATE:")
		f.clock.Advance(time.Second)
		p, err = a.Preview(ctx)
		require.NoError(t, err)
		assert.NotContains(t, p.Text, prompt.PresenceLine)
	})
	t.Run("assigned task", func(t *testing.T) {
		f := newFixture(goalReply(t, "g"))
		q := taskqueue.NewMemory(taskqueue.Options{Now: f.clock.Now})
		_, err := q.Submit(ctx, "summarise design/", "scout")
		require.NoError(t, err)
		f.clock.Advance(time.Hour)
		a := f.agent(t, existence.Config{Tasks: q, Executor: blockingExecutor()})
		require.NoError(t, a.Tick(ctx))
		assert.Contains(t, f.model.Requests()[0].Messages[0].Content, prompt.PresenceLine)
		assert.Equal(t, t0, a.State().LastPresence, "the task's submission time")
	})
}
