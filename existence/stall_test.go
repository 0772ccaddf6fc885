package existence_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/existence"
	"github.com/existence-loop/sdk/existence/event"
	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/llm/llmtest"
	"github.com/existence-loop/sdk/suffering"
)

// TestGoalSpanStall: a goal still being pursued MaxGoalDuration after its
// executor started is abandoned at the next heartbeat, its executor
// cancelled, and the rule reported, whatever the heartbeat.
func TestGoalSpanStall(t *testing.T) {
	tests := []struct {
		name      string
		cfg       existence.Config
		heartbeat time.Duration
		limit     time.Duration
		abandons  int // the heartbeat after the cycle on which it is abandoned; 0 never (within 30)
	}{
		{"default 2 minutes", existence.Config{}, 6 * time.Second, 2 * time.Minute, 21},
		{"configured 20s", existence.Config{Timing: existence.TimingConfig{MaxGoalDuration: 20 * time.Second}}, 6 * time.Second, 20 * time.Second, 4},
		{"configured 2s, 300 ms heartbeat", existence.Config{Timing: existence.TimingConfig{MaxGoalDuration: 2 * time.Second, Heartbeat: 300 * time.Millisecond}}, 300 * time.Millisecond, 2 * time.Second, 7},
		{"disabled", existence.Config{Timing: existence.TimingConfig{MaxGoalDuration: -1}}, 6 * time.Second, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(goalReply(t, "a goal that never ends"), goalReply(t, "the next goal"))
			cancelled := make(chan struct{}, 2)
			exec := existence.ExecutorFunc(func(ctx context.Context, a existence.Assignment) (existence.Outcome, error) {
				<-ctx.Done()
				cancelled <- struct{}{}
				return existence.Outcome{}, ctx.Err()
			})
			cfg := tt.cfg
			cfg.Executor = exec
			assert.Equal(t, tt.limit, cfg.EffectiveMaxGoalDuration())
			a := f.agent(t, cfg)
			ctx := context.Background()
			require.NoError(t, a.Tick(ctx)) // chooses the goal
			ended := 0
			for beat := 1; beat <= 30 && ended == 0; beat++ {
				f.clock.Advance(tt.heartbeat)
				require.NoError(t, a.Tick(ctx))
				if len(f.rec.Kind(event.Stall)) > 0 {
					ended = beat
				}
			}
			assert.Equal(t, tt.abandons, ended)
			if tt.abandons == 0 {
				assert.Equal(t, 1, f.model.Calls())
				return
			}
			<-cancelled // the executor's ctx was cancelled
			stalls := f.rec.Kind(event.Stall)
			require.Len(t, stalls, 1)
			assert.Equal(t, "goal_span", stalls[0].Reason)
			assert.Equal(t, "a goal that never ends", stalls[0].Goal)
			want := fmt.Sprintf("abandoned: the goal was still being pursued after %s (stall rule goal_span)", tt.limit)
			assert.Equal(t, want, stalls[0].Text)
			g := a.State().Identity.Goals[0]
			assert.Equal(t, identity.Abandoned, g.Status)
			assert.Equal(t, want, g.Outcome)
			// The same heartbeat chose the next goal (no idle state).
			assert.Equal(t, 2, f.model.Calls())
			assert.Equal(t, "the next goal", a.State().Identity.ActiveGoal().Objective)
		})
	}
}

// TestGoalSpanDoesNotDependOnTheHeartbeat: with a 300 ms heartbeat (for a
// test or a demo) a goal is not abandoned any sooner than with 6 s: the
// same 90 s pursuit survives both, and the same 3 minute one is abandoned
// by both at the first heartbeat past 2 minutes.
func TestGoalSpanDoesNotDependOnTheHeartbeat(t *testing.T) {
	for _, hb := range []time.Duration{300 * time.Millisecond, 6 * time.Second} {
		for _, span := range []time.Duration{90 * time.Second, 3 * time.Minute} {
			f := newFixture(goalReply(t, "a long goal"), goalReply(t, "the next goal"))
			a := f.agent(t, existence.Config{Timing: existence.TimingConfig{Heartbeat: hb}, Executor: blockingExecutor()})
			ctx := context.Background()
			require.NoError(t, a.Tick(ctx))
			var at time.Duration // when the stall fired, from the goal's start
			for elapsed := time.Duration(0); elapsed < span && at == 0; {
				f.clock.Advance(hb)
				elapsed += hb
				require.NoError(t, a.Tick(ctx))
				if len(f.rec.Kind(event.Stall)) > 0 {
					at = elapsed
				}
			}
			if span < existence.DefaultMaxGoalDuration {
				assert.Zero(t, at, "heartbeat %v: a %v goal is not a stall", hb, span)
				continue
			}
			assert.Greater(t, at, existence.DefaultMaxGoalDuration, "heartbeat %v", hb)
			assert.LessOrEqual(t, at, existence.DefaultMaxGoalDuration+hb, "heartbeat %v: at the first heartbeat past the limit", hb)
		}
	}
}

func history(objectives ...string) *identity.Identity {
	id := identity.New("scout", "Cedar", t0)
	for i, o := range objectives {
		g := identity.Goal{ID: fmt.Sprint(i), Objective: o, Status: identity.Done, Started: t0, Ended: t0}
		switch o {
		case "FALLBACK":
			g.Objective, g.Fallback = existence.FallbackContent, true
		case "TASK":
			g.Objective, g.TaskID = "map the workspace", "t1"
		}
		id.Goals = append(id.Goals, g)
	}
	return &id
}

func TestRepeats(t *testing.T) {
	var filler []string
	for i := range 10 {
		filler = append(filler, fmt.Sprintf("distinct goal %d", i))
	}
	tests := []struct {
		name    string
		goals   []string
		earlier string
		ok      bool
	}{
		{"first goal", []string{"map the workspace"}, "", false},
		{"punctuation and case", []string{"Map the workspace.", "other", "map THE   workspace"}, "Map the workspace.", true},
		{"different", []string{"map the workspace", "write the map"}, "", false},
		{"10 goals back", append(append([]string{"map the workspace"}, filler[:9]...), "map the workspace"), "map the workspace", true},
		{"11 goals back", append(append([]string{"map the workspace"}, filler...), "map the workspace"), "", false},
		{"fallback goals are not repeats", []string{"FALLBACK", "FALLBACK"}, "", false},
		{"assigned tasks are not repeats", []string{"map the workspace", "TASK"}, "", false},
		{"fallbacks do not use up the window", append(append([]string{"map the workspace"}, "FALLBACK", "FALLBACK", "TASK"), append(filler[:9], "map the workspace")...), "map the workspace", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id := history(tt.goals...)
			earlier, ok := existence.Repeats(id, len(id.Goals)-1)
			assert.Equal(t, tt.ok, ok)
			assert.Equal(t, tt.earlier, earlier)
		})
	}
	_, ok := existence.Repeats(history("x"), 5)
	assert.False(t, ok, "out of range")
}

// TestRepeatsCountAsFailures: DONE goals that repeat a recent one count as
// failed in the observation, so that going round in circles raises
// repeated_failure even with an executor that completes everything.
func TestRepeatsCountAsFailures(t *testing.T) {
	o := existence.GoalEvidence(history("tidy the notes", "tidy the notes!", "Tidy the notes", "tidy  the notes", "tidy the notes", "something new"))
	assert.Equal(t, 2, o.Completed, "the first and the last")
	assert.Equal(t, 4, o.Failed, "the four repeats")

	// With Immediate, an agent that keeps choosing the same goal suffers.
	var replies []llmtest.Reply
	for range 6 {
		replies = append(replies, goalReply(t, "tidy the notes"))
	}
	f := newFixture(replies...)
	a := f.agent(t, existence.Config{})
	for range 6 {
		tick(t, a)
		f.clock.Advance(6 * time.Second)
	}
	reps := f.rec.Kind(event.GoalRepeat)
	require.Len(t, reps, 5)
	assert.Equal(t, "tidy the notes", reps[0].Goal)
	assert.Equal(t, "tidy the notes", reps[0].Text)
	_, active := a.State().Suffering.Find(suffering.RepeatedFailure)
	assert.True(t, active, "5 of 6 goals repeated: repeated_failure")
}
