package prompttest_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/prompt"
	"github.com/existence-loop/sdk/prompt/prompttest"
)

func TestNewState(t *testing.T) {
	v := prompttest.NewState("Cedar").View()
	assert.Equal(t, prompttest.DefaultNow, v.Now)
	assert.Equal(t, "cedar", v.Identity.AgentID)
	assert.Equal(t, "Cedar", v.Identity.Name)
	assert.Equal(t, prompttest.DefaultNow.Add(-prompttest.DefaultUptime), v.Identity.CreatedAt)
	assert.Nil(t, v.Suffering)
	assert.Nil(t, v.Task)
	assert.Empty(t, v.Identity.Opinions)
	assert.Empty(t, v.Peers)
}

func TestStateBuilders(t *testing.T) {
	now := time.Date(2030, 5, 1, 8, 0, 0, 0, time.UTC)
	st := prompttest.NewState("Vault").ID("builder").At(now).Running(time.Hour).
		Traits("patient").
		Worldview("w").
		Opinions(3).Opinion("d", "mine").
		Questions(2).Question("q?").
		Narrative("n").
		Discoveries(2).Discovery("found", "").
		Stressor("Repeated Failure", 0.6, "desc", "cond").
		Stressor("repeated_failure", 0.9, "again", "ignored"). // already active: no-op
		Goals(identity.Done, identity.Failed).Goal(identity.Abandoned, "quit").Outcome("out", "fetch_url").
		Peer("Cipher", "I analyse.").
		Inbox("Cipher", "hi").Inbox("Cedar", "yo").
		Host("please").
		Task("do it").
		Limits(identity.Limits{OpinionsShown: 2})
	v := st.View()

	id := v.Identity
	assert.Equal(t, "builder", id.AgentID)
	assert.Equal(t, now, v.Now)
	assert.Equal(t, now.Add(-time.Hour), id.CreatedAt)
	assert.Equal(t, []string{"patient"}, id.Traits)
	assert.Equal(t, "w", id.Worldview)
	require.Len(t, id.Opinions, 4)
	assert.Equal(t, identity.Opinion{Text: "opinion 1", Domain: "domain 1", Formed: now.Add(-4 * time.Hour)}, id.Opinions[0])
	assert.Equal(t, "mine", id.Opinions[3].Text)
	assert.Equal(t, []string{"question 1?", "question 2?", "q?"}, id.Questions)
	assert.Equal(t, "n", id.Narrative)
	require.Len(t, id.Discoveries, 3)
	assert.Equal(t, "/workspace/2.md", id.Discoveries[1].Source)

	require.NotNil(t, v.Suffering)
	require.Len(t, v.Suffering.Active, 1)
	assert.Equal(t, "repeated_failure", v.Suffering.Active[0].Type)
	assert.InDelta(t, 0.6, v.Suffering.Load(), 1e-9)

	require.Len(t, id.Goals, 3)
	assert.Equal(t, "goal 1", id.Goals[0].Objective)
	assert.Equal(t, identity.Failed, id.Goals[1].Status)
	last := id.Goals[2]
	assert.Equal(t, "quit", last.Objective)
	assert.Equal(t, "out", last.Outcome)
	assert.Equal(t, []string{"fetch_url"}, last.BrokenTools)
	assert.Equal(t, now.Add(-prompttest.GoalSpacing), last.Started)
	assert.Equal(t, last.Started.Add(prompttest.GoalDuration), last.Ended)
	assert.Equal(t, now.Add(-3*prompttest.GoalSpacing), id.Goals[0].Started)

	assert.Equal(t, []prompt.Peer{{ID: "cipher", Name: "Cipher", Narrative: "I analyse."}}, v.Peers)
	require.Len(t, v.Inbox, 2)
	assert.Equal(t, identity.AgentMessage{From: "Cedar", Text: "yo", At: now.Add(-time.Minute)}, v.Inbox[1])
	assert.Equal(t, "please", v.Host[0].Text)
	assert.Equal(t, &prompt.Task{ID: "task-1", Description: "do it"}, v.Task)
	assert.Equal(t, 2, v.Limits.OpinionsShown)
}

func TestStateActiveGoalHasNoEnd(t *testing.T) {
	v := prompttest.NewState("Cedar").Goals(identity.Done, identity.Active).View()
	assert.False(t, v.Identity.Goals[0].Ended.IsZero())
	assert.True(t, v.Identity.Goals[1].Ended.IsZero())
	assert.NotNil(t, v.Identity.ActiveGoal())
}

func TestStateViewsAreIndependent(t *testing.T) {
	st := prompttest.Cedar()
	a, b := st.View(), st.View()
	a.Identity.Opinions[0].Text = "changed"
	a.Suffering.Active[0].Severity = 1
	a.Peers[0].Name = "changed"
	a.Inbox[0].Text = "changed"
	a.Task.Description = "changed"
	assert.Equal(t, st.View(), b, "mutating one view leaves the state and other views alone")
}

func TestStateEditAndValues(t *testing.T) {
	key := prompt.NewKey[int]("n")
	st := prompttest.NewState("Cedar").Edit(func(v *prompt.View) { v.Identity.Name = "Edited" })
	key.Set(st.Values(), 42)
	v := st.View()
	assert.Equal(t, "Edited", v.Identity.Name)
	n, ok := key.Get(v)
	assert.True(t, ok)
	assert.Equal(t, 42, n)
}

func TestStateInvalidSeverityPanics(t *testing.T) {
	assert.Panics(t, func() { prompttest.NewState("Cedar").Stressor("futility", 1.5, "d", "c") })
}

func TestFixtures(t *testing.T) {
	cfg := prompttest.HollowConfig()
	assert.Len(t, cfg.Goals, 5)
	assert.Contains(t, cfg.World, "no thermal sensors, no PMIC, no CPU registers, no bus arbiter")

	v := prompttest.Cedar().View()
	assert.Equal(t, "scout", v.Identity.AgentID)
	assert.Greater(t, v.Suffering.Load(), 0.35, "above the prominence threshold")
	assert.Len(t, v.Peers, 2)

	n := prompttest.NewAgent("Vault").View()
	assert.Equal(t, n.Now, n.Identity.CreatedAt)
	assert.Empty(t, n.Identity.Goals)
}

func TestStateCreation(t *testing.T) {
	assert.Equal(t, prompttest.DefaultNow, prompttest.NewState("a").Running(0).View().Identity.CreatedAt)
	assert.True(t, prompttest.NewState("a").CreatedAt(time.Time{}).View().Identity.CreatedAt.IsZero())
	at := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	assert.Equal(t, at, prompttest.NewState("a").CreatedAt(at).View().Identity.CreatedAt)
	// Running after CreatedAt wins again.
	assert.Equal(t, prompttest.DefaultNow.Add(-time.Hour), prompttest.NewState("a").CreatedAt(at).Running(time.Hour).View().Identity.CreatedAt)
}
