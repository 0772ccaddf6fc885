package identity

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestValidateID(t *testing.T) {
	tests := []struct {
		id string
		ok bool
	}{
		{"scout", true},
		{"analyst", true},
		{"a", true},
		{"0", true},
		{"agent-7_b", true},
		{strings.Repeat("a", 64), true},
		{strings.Repeat("a", 65), false},
		{"", false},
		{"A", false},
		{"Scout", false},
		{"../x", false},
		{"..", false},
		{".", false},
		{"a/b", false},
		{`a\b`, false},
		{"/abs", false},
		{"x\x00", false},
		{"scout\n", false},
		{" scout", false},
		{"-scout", false},
		{"_scout", false},
		{"scout.json", false},
		{"é", false},
		{"a b", false},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%q", tt.id), func(t *testing.T) {
			err := ValidateID(tt.id)
			if tt.ok {
				assert.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, ErrInvalidID)
			assert.Contains(t, err.Error(), fmt.Sprintf("%q", tt.id), "the error names the id")
		})
	}
}

func TestDefaultLimitsMatchSpec(t *testing.T) {
	l := DefaultLimits()
	// Sources: spec §3 (worldview 600, opinions 20, questions 12), spec §5
	// (narrative kept 800, shown 400), spec §2 (outcome 400, shown counts).
	assert.Equal(t, 600, l.Worldview)
	assert.Equal(t, 20, l.Opinions)
	assert.Equal(t, 12, l.Questions)
	assert.Equal(t, 800, l.NarrativeKept)
	assert.Equal(t, 400, l.NarrativeShown)
	assert.Equal(t, 20, l.Discoveries)
	assert.Equal(t, 300, l.DiscoveryChars)
	assert.Equal(t, 100, l.Goals)
	assert.Equal(t, 400, l.Outcome)
	assert.Equal(t, 20, l.Inbox)
	assert.Equal(t, 6, l.OpinionsShown)
	assert.Equal(t, 5, l.QuestionsShown)
	assert.Equal(t, 5, l.DiscoveriesShown)
	assert.Equal(t, 5, l.GoalsShown)
	assert.Equal(t, 150, l.PeerNarrative)
	assert.Equal(t, 5, l.PeerMessagesShown)
	assert.Equal(t, 200, l.PeerMessage)
	assert.Equal(t, 500, l.HostMessage)
}

func TestLimitsWithDefaults(t *testing.T) {
	assert.Equal(t, DefaultLimits(), Limits{}.WithDefaults(), "zero value means defaults")
	got := Limits{Worldview: 10, Opinions: -3, Questions: 2}.WithDefaults()
	assert.Equal(t, 10, got.Worldview, "set fields are kept")
	assert.Equal(t, 2, got.Questions)
	assert.Equal(t, 20, got.Opinions, "negative means default")
	assert.Equal(t, 800, got.NarrativeKept)
}

func TestSetWorldview(t *testing.T) {
	tests := []struct {
		name    string
		before  string
		text    string
		l       Limits
		want    string
		changed bool
	}{
		{"sets", "", "  the world is a workspace  ", Limits{}, "the world is a workspace", true},
		{"overwrites, never appends", "old view", "new view", Limits{}, "new view", true},
		{"blank changes nothing", "old view", " \n\t ", Limits{}, "old view", false},
		{"same text is no change", "same", "same", Limits{}, "same", false},
		{"cut to 600", "", strings.Repeat("a", 700), Limits{}, strings.Repeat("a", 600), true},
		{"exactly 600 kept", "", strings.Repeat("b", 600), Limits{}, strings.Repeat("b", 600), true},
		{"multi-byte cut at code points", "", strings.Repeat("日", 601), Limits{}, strings.Repeat("日", 600), true},
		{"emoji cut at code points", "", strings.Repeat("😀", 3), Limits{Worldview: 2}, "😀😀", true},
		{"custom cap", "", "abcdef", Limits{Worldview: 4}, "abcd", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id := Identity{Worldview: tt.before}
			assert.Equal(t, tt.changed, id.SetWorldview(tt.text, tt.l))
			assert.Equal(t, tt.want, id.Worldview)
			assert.True(t, utf8.ValidString(id.Worldview))
		})
	}
}

func TestListCaps(t *testing.T) {
	tests := []struct {
		name string
		add  func(id *Identity, i int, l Limits) bool
		len  func(id *Identity) int
		last func(id *Identity) string
		l    Limits
		want int
		// the newest entry, which must be kept
		wantLast string
	}{
		{
			name: "opinions capped at 20",
			add: func(id *Identity, i int, l Limits) bool {
				return id.AddOpinion(Opinion{Text: fmt.Sprint("op", i), Domain: "d"}, l)
			},
			len:  func(id *Identity) int { return len(id.Opinions) },
			last: func(id *Identity) string { return id.Opinions[len(id.Opinions)-1].Text },
			want: 20, wantLast: "op129",
		},
		{
			name: "opinions custom cap",
			add: func(id *Identity, i int, l Limits) bool {
				return id.AddOpinion(Opinion{Text: fmt.Sprint("op", i)}, l)
			},
			len:  func(id *Identity) int { return len(id.Opinions) },
			last: func(id *Identity) string { return id.Opinions[len(id.Opinions)-1].Text },
			l:    Limits{Opinions: 3},
			want: 3, wantLast: "op129",
		},
		{
			name: "questions capped at 12",
			add:  func(id *Identity, i int, l Limits) bool { return id.AddQuestion(fmt.Sprint("q", i), l) },
			len:  func(id *Identity) int { return len(id.Questions) },
			last: func(id *Identity) string { return id.Questions[len(id.Questions)-1] },
			want: 12, wantLast: "q129",
		},
		{
			name: "discoveries capped at 20",
			add: func(id *Identity, i int, l Limits) bool {
				return id.AddDiscovery(Discovery{Text: fmt.Sprint("d", i)}, l)
			},
			len:  func(id *Identity) int { return len(id.Discoveries) },
			last: func(id *Identity) string { return id.Discoveries[len(id.Discoveries)-1].Text },
			want: 20, wantLast: "d129",
		},
		{
			name: "goals capped at 100",
			add: func(id *Identity, i int, l Limits) bool {
				if err := id.StartGoal(Goal{ID: fmt.Sprint("g", i), Objective: fmt.Sprint("g", i)}, l); err != nil {
					return false
				}
				_, err := id.EndGoal(Done, "ok", t0, l)
				return err == nil
			},
			len:  func(id *Identity) int { return len(id.Goals) },
			last: func(id *Identity) string { return id.Goals[len(id.Goals)-1].Objective },
			want: 100, wantLast: "g129",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var id Identity
			const n = 130
			for i := range n {
				require.True(t, tt.add(&id, i, tt.l), "add %d", i)
			}
			assert.Equal(t, tt.want, tt.len(&id))
			assert.Equal(t, tt.wantLast, tt.last(&id), "the newest entry is kept")
		})
	}
}

func TestListsKeepNewestInOrder(t *testing.T) {
	var id Identity
	for i := range 15 {
		id.AddQuestion(fmt.Sprintf("q%02d", i), Limits{})
	}
	want := []string{}
	for i := 3; i < 15; i++ {
		want = append(want, fmt.Sprintf("q%02d", i))
	}
	assert.Equal(t, want, id.Questions, "oldest fall off, order kept")
}

func TestAddIgnoresBlank(t *testing.T) {
	var id Identity
	assert.False(t, id.AddOpinion(Opinion{Text: "  ", Domain: "x"}, Limits{}))
	assert.False(t, id.AddQuestion("\n", Limits{}))
	assert.False(t, id.AddDiscovery(Discovery{Text: " "}, Limits{}))
	assert.Empty(t, id.Opinions)
	assert.Empty(t, id.Questions)
	assert.Empty(t, id.Discoveries)

	require.True(t, id.AddOpinion(Opinion{Text: "  trimmed  ", Domain: " d "}, Limits{}))
	assert.Equal(t, Opinion{Text: "trimmed", Domain: "d"}, id.Opinions[0])
	require.True(t, id.AddQuestion("  why?  ", Limits{}))
	assert.Equal(t, "why?", id.Questions[0])
}

func TestAddDiscoveryCutsText(t *testing.T) {
	var id Identity
	require.True(t, id.AddDiscovery(Discovery{Text: strings.Repeat("é", 350), Source: "x"}, Limits{}))
	assert.Equal(t, strings.Repeat("é", 300), id.Discoveries[0].Text)
}

func TestAppendNarrative(t *testing.T) {
	var id Identity
	id.AppendNarrative("  first  ", Limits{})
	id.AppendNarrative("", Limits{})
	id.AppendNarrative("second", Limits{})
	assert.Equal(t, "first second", id.Narrative)

	// The narrative keeps its last 800 characters (spec §5), cut at code
	// points.
	id = Identity{}
	for i := range 100 {
		id.AppendNarrative(fmt.Sprintf("[%03d] 日本語😀", i), Limits{})
	}
	assert.Equal(t, 800, utf8.RuneCountInString(id.Narrative))
	assert.True(t, utf8.ValidString(id.Narrative))
	assert.True(t, strings.HasSuffix(id.Narrative, "[099] 日本語😀"), "the tail is kept")

	id = Identity{}
	id.AppendNarrative("abcdef", Limits{NarrativeKept: 3})
	assert.Equal(t, "def", id.Narrative)
}

func TestGoals(t *testing.T) {
	var id Identity
	assert.Nil(t, id.ActiveGoal())
	assert.Nil(t, id.LastEnded())

	_, err := id.EndGoal(Done, "x", t0, Limits{})
	require.ErrorIs(t, err, ErrNoActiveGoal)

	require.NoError(t, id.StartGoal(Goal{ID: "g1", Objective: "map  the\nworkspace", Status: Done, Ended: t0}, Limits{}))
	g := id.ActiveGoal()
	require.NotNil(t, g)
	assert.Equal(t, Active, g.Status, "StartGoal sets the status")
	assert.True(t, g.Ended.IsZero(), "StartGoal clears Ended")

	require.ErrorIs(t, id.StartGoal(Goal{ID: "g2"}, Limits{}), ErrGoalActive)
	assert.Len(t, id.Goals, 1)

	for _, bad := range []GoalStatus{Active, "", "done", "weird"} {
		_, err := id.EndGoal(bad, "x", t0, Limits{})
		require.Error(t, err, "status %q", bad)
		assert.Contains(t, err.Error(), "not a final goal status")
	}
	require.NotNil(t, id.ActiveGoal(), "a refused EndGoal leaves the goal active")

	long := strings.Repeat("ü", 450)
	ended, err := id.EndGoal(Done, "  "+long+"  ", t0, Limits{})
	require.NoError(t, err)
	assert.Equal(t, Done, ended.Status)
	assert.Equal(t, t0, ended.Ended)
	assert.Equal(t, strings.Repeat("ü", 400), ended.Outcome, "outcome cut to 400 characters")
	assert.Nil(t, id.ActiveGoal())
	assert.Equal(t, "g1", id.LastEnded().ID)
	assert.Equal(t, "[2026-11-21] Completed: map the workspace.", id.Narrative)

	obj := strings.Repeat("ж", 100)
	require.NoError(t, id.StartGoal(Goal{ID: "g2", Objective: obj}, Limits{}))
	assert.Equal(t, "g1", id.LastEnded().ID, "an active goal is not ended")
	_, err = id.EndGoal(Abandoned, "", t0.Add(24*time.Hour), Limits{})
	require.NoError(t, err)
	assert.True(t, strings.HasSuffix(id.Narrative, " [2026-11-22] Abandoned: "+strings.Repeat("ж", 80)+"."), id.Narrative)

	require.NoError(t, id.StartGoal(Goal{ID: "g3", Objective: "x"}, Limits{}))
	_, err = id.EndGoal(Failed, "", t0, Limits{})
	require.NoError(t, err)
	assert.True(t, strings.HasSuffix(id.Narrative, "Failed: x."))
}

func TestGoalStatusEnded(t *testing.T) {
	for s, want := range map[GoalStatus]bool{Done: true, Failed: true, Abandoned: true, Active: false, "": false, "done": false} {
		assert.Equal(t, want, s.Ended(), "%q", s)
	}
}

func TestEnforceTrimsAndReports(t *testing.T) {
	id := Identity{
		AgentID:   "scout",
		Worldview: strings.Repeat("w", 590) + strings.Repeat("界", 20),
		Narrative: strings.Repeat("n", 10) + strings.Repeat("😀", 800),
	}
	for i := range 25 {
		id.Opinions = append(id.Opinions, Opinion{Text: fmt.Sprint("op", i)})
		id.Discoveries = append(id.Discoveries, Discovery{Text: strings.Repeat("d", 301)})
	}
	for i := range 14 {
		id.Questions = append(id.Questions, fmt.Sprint("q", i))
	}
	for i := range 103 {
		id.Goals = append(id.Goals, Goal{ID: fmt.Sprint("g", i), Status: Done, Outcome: strings.Repeat("o", 401)})
	}
	id.Goals[50].Status = Active // interrupted by a crash
	id.Goals[60].Status = Active
	id.Goals[102].Status = Active // the current goal stays active

	cuts := id.Enforce(Limits{})
	assert.Equal(t, []string{
		"worldview characters: 610 → 600",
		"narrative characters: 810 → 800",
		"opinions: 25 → 20",
		"open questions: 14 → 12",
		"discoveries: 25 → 20",
		"discovery texts cut to 300 characters: 20",
		"goals: 103 → 100",
		"stale active goals: 2 → 0",
		"goal outcomes cut to 400 characters: 100",
	}, cuts)

	assert.Equal(t, strings.Repeat("w", 590)+strings.Repeat("界", 10), id.Worldview, "worldview keeps its head")
	assert.Equal(t, strings.Repeat("😀", 800), id.Narrative, "narrative keeps its tail")
	assert.Equal(t, "op24", id.Opinions[19].Text)
	assert.Equal(t, "op5", id.Opinions[0].Text)
	assert.Equal(t, []string{"q2", "q3", "q4", "q5", "q6", "q7", "q8", "q9", "q10", "q11", "q12", "q13"}, id.Questions)
	assert.Len(t, id.Discoveries, 20)
	assert.Equal(t, 300, utf8.RuneCountInString(id.Discoveries[0].Text))
	assert.Len(t, id.Goals, 100)
	assert.Equal(t, "g3", id.Goals[0].ID)
	assert.Equal(t, Abandoned, id.Goals[47].Status) // g50
	assert.Equal(t, 400, utf8.RuneCountInString(id.Goals[47].Outcome))
	assert.Equal(t, Active, id.Goals[99].Status)
	require.NotNil(t, id.ActiveGoal())
	assert.Equal(t, "g102", id.ActiveGoal().ID)

	assert.Nil(t, id.Enforce(Limits{}), "a second Enforce cuts nothing")
}

func TestEnforceStaleActiveGoalOutcome(t *testing.T) {
	id := Identity{Goals: []Goal{{ID: "a", Status: Active}, {ID: "b", Status: Done}}}
	assert.Equal(t, []string{"stale active goals: 1 → 0"}, id.Enforce(Limits{}))
	assert.Equal(t, Abandoned, id.Goals[0].Status)
	assert.Equal(t, "interrupted before it ended", id.Goals[0].Outcome)
}

func TestEnforceNeverRefuses(t *testing.T) {
	for _, id := range []Identity{
		{},
		{Worldview: "\xff\xfe" + strings.Repeat("x", 1000)},
		{Narrative: strings.Repeat("\xff", 5000)},
		{Goals: []Goal{{Status: "weird"}, {Status: Active}}},
	} {
		assert.NotPanics(t, func() { id.Enforce(Limits{}) })
		assert.LessOrEqual(t, utf8.RuneCountInString(id.Worldview), 600)
		assert.LessOrEqual(t, utf8.RuneCountInString(id.Narrative), 800)
	}
}

func TestErrorsAreDistinct(t *testing.T) {
	all := []error{ErrInvalidID, ErrNoActiveGoal, ErrGoalActive, ErrNotFound, ErrCorrupt, ErrLocked, ErrTooLarge, ErrFutureVersion}
	for i, a := range all {
		for j, b := range all {
			assert.Equal(t, i == j, errors.Is(a, b), "%v vs %v", a, b)
		}
	}
}

// TestAppendLast checks appendLast against its definition,
// keepLast(append(s, v), n), over long runs of appends for several caps,
// and that no element an older slice header can see is ever written.
func TestAppendLast(t *testing.T) {
	for _, n := range []int{0, 1, 2, 3, 4, 8, 12, 20} {
		var got, want []int
		for i := range 5*n + 7 {
			old := got
			snapshot := slices.Clone(old)
			got = appendLast(got, i, n)
			want = keepLast(append(want, i), n)
			require.Equal(t, want, got, "n=%d after %d appends", n, i+1)
			require.Equal(t, snapshot, old, "n=%d append %d changed an older header", n, i)
		}
	}
	// A slice loaded over its cap is cut, as keepLast does.
	require.Equal(t, []int{4, 5}, appendLast([]int{1, 2, 3, 4}, 5, 2), "over the cap")
}

// TestEnforceReservesRoom: a list loaded at its cap without spare capacity
// gets the room its next addition would allocate, so that the addition
// slides within the same array (no allocation on the first cycle after a
// load); lists below their caps, and lists with room, are left as they are.
func TestEnforceReservesRoom(t *testing.T) {
	l := DefaultLimits()
	t0 := time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)
	id := New("a", "A", t0)
	for i := range l.Goals {
		id.Goals = append(id.Goals, Goal{ID: fmt.Sprint("g", i), Objective: fmt.Sprint("goal ", i), Status: Done, Started: t0})
	}
	id.Goals = slices.Clip(id.Goals) // as a store loads it: no spare capacity
	id.Questions = []string{"only one"}
	assert.Empty(t, id.Enforce(l), "reserving room is not a cut")
	assert.GreaterOrEqual(t, cap(id.Goals), l.Goals+l.Goals/4)
	assert.Equal(t, 1, cap(id.Questions), "below its cap: untouched")
	reserved := &id.Goals[0]
	id.Enforce(l)
	assert.Same(t, reserved, &id.Goals[0], "a list with room keeps its array")

	first := &id.Goals[1]
	require.NoError(t, id.StartGoal(Goal{ID: "new", Objective: "the next goal", Started: t0}, l))
	require.Len(t, id.Goals, l.Goals)
	assert.Same(t, first, &id.Goals[0], "the addition slid within the reserved array")
}

// BenchmarkAddOpinionAtCap measures adding an opinion to a full list, the
// steady state of a long-lived agent (part of every cycle's cost).
func BenchmarkAddOpinionAtCap(b *testing.B) {
	l := DefaultLimits()
	id := New("a", "A", time.Unix(0, 0))
	for i := range l.Opinions {
		id.AddOpinion(Opinion{Text: fmt.Sprint("opinion ", i)}, l)
	}
	b.ReportAllocs()
	for b.Loop() {
		id.AddOpinion(Opinion{Text: "one more opinion", Domain: "d"}, l)
	}
}
