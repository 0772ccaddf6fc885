package prompttest_test

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/prompt"
	"github.com/existence-loop/sdk/prompt/prompttest"
)

func assembler(l prompt.Layout) *prompt.Assembler {
	cfg := prompttest.HollowConfig()
	cfg.Layout = l
	return prompt.New(cfg)
}

// TestLayoutsShowTheSameSections: both layouts show the same sections with
// the same texts for a state whose lists are within their caps; only the
// order differs.
func TestLayoutsShowTheSameSections(t *testing.T) {
	v := prompttest.Cedar().View()
	orig := prompttest.Assemble(t, assembler(prompt.LayoutOriginal), v)
	cache := prompttest.Assemble(t, assembler(prompt.LayoutCache), v)
	assert.Equal(t, prompt.DefaultOrder(), assembler(prompt.LayoutOriginal).Names())
	assert.Equal(t, prompt.CacheOrder(), assembler(prompt.LayoutCache).Names())
	assert.ElementsMatch(t, prompt.DefaultOrder(), prompt.CacheOrder())
	for _, name := range prompt.DefaultOrder() {
		if name == prompt.SectionOpinions || name == prompt.SectionQuestions || name == prompt.SectionRecentGoals || name == prompt.SectionDiscoveries {
			continue // batched windows may show fewer items (TestCacheLayoutBatches)
		}
		o, c := prompttest.SectionWithHeader(t, orig, name), prompttest.SectionWithHeader(t, cache, name)
		switch name {
		case prompt.SectionSituation: // the presence line moves to the time section
			assert.Equal(t, o, c+"\n"+prompt.PresenceLine, name)
		case prompt.SectionTime:
			assert.Equal(t, o+"\n"+prompt.PresenceLine, c, name)
		default:
			assert.Equal(t, o, c, name)
		}
	}
	assert.True(t, prompttest.SectionOrder(t, cache, prompt.SectionWorld, prompt.SectionDirective, prompt.SectionResponseFormat,
		prompt.SectionPeers, prompt.SectionWorldview, prompt.SectionRecentGoals, prompt.SectionDiscoveries, prompt.SectionIdentity,
		prompt.SectionTime, prompt.SectionInnerState, prompt.SectionTask))
	prompttest.Golden(t, "cache_layout", cache.Text)

	// The agent-first cache layout: the same texts as the cache layout,
	// the name first.
	agent := prompttest.Assemble(t, assembler(prompt.LayoutCacheAgent), v)
	assert.Equal(t, prompt.CacheAgentOrder(), assembler(prompt.LayoutCacheAgent).Names())
	assert.ElementsMatch(t, prompt.DefaultOrder(), prompt.CacheAgentOrder())
	for _, name := range prompt.DefaultOrder() {
		assert.Equal(t, prompttest.SectionWithHeader(t, cache, name), prompttest.SectionWithHeader(t, agent, name), name)
	}
	assert.True(t, strings.HasPrefix(agent.Text, "You are Cedar."), agent.Text)
	assert.True(t, prompttest.SectionOrder(t, agent, prompt.SectionIdentity, prompt.SectionWorld, prompt.SectionDirective,
		prompt.SectionResponseFormat, prompt.SectionWorldview, prompt.SectionHistory, prompt.SectionPeers, prompt.SectionDiscoveries,
		prompt.SectionTime, prompt.SectionInnerState, prompt.SectionTask))
	prompttest.Golden(t, "cache_agent_layout", agent.Text)
}

// TestCacheLayoutNewAgentsShare: under the cache layout two agents that
// have gathered nothing yet (a new swarm) share everything before their
// names, the placeholders of what they gather included; under the
// agent-first layout they share only "You are ".
func TestCacheLayoutNewAgentsShare(t *testing.T) {
	for _, tc := range []struct {
		l    prompt.Layout
		want func(text string) int
	}{
		{prompt.LayoutCache, func(text string) int {
			i := strings.Index(text, "You are Agent 1.")
			require.Greater(t, i, strings.Index(text, "WHAT YOU'VE FOUND OUTSIDE:"), "the name follows the placeholders")
			return utf8.RuneCountInString(text[:i+len("You are Agent ")])
		}},
		{prompt.LayoutCacheAgent, func(string) int { return len("You are Agent ") }},
		{prompt.LayoutOriginal, func(text string) int { return strings.Index(text, "You are Agent ") + len("You are Agent ") }},
	} {
		a := assembler(tc.l)
		one := prompttest.Assemble(t, a, prompttest.NewAgent("Agent 1").View()).Text
		two := prompttest.Assemble(t, a, prompttest.NewAgent("Agent 2").ID("agent-2").View()).Text
		assert.Equal(t, tc.want(one), prompttest.CommonPrefix(one, two), tc.l.String())
	}
}

// TestCacheLayoutSharesPrefixes: under the cache layout two agents' prompts
// share everything before "You are", and an agent's next cycle (the
// clock on, a new goal, another stressor) changes its prompt only after
// the slow-changing part; under the original both differ early.
func TestCacheLayoutSharesPrefixes(t *testing.T) {
	t.Run("presence", func(t *testing.T) {
		// A person's arrival changes only the per-cycle part: the stable
		// prefix (and the tool definitions a server renders after it)
		// stays the same.
		a := assembler(prompt.LayoutCache)
		present := prompttest.Assemble(t, a, prompttest.Cedar().View())
		absent := prompttest.Assemble(t, a, prompttest.Cedar().Edit(func(v *prompt.View) {
			v.LastPresence, v.Host, v.Task = time.Time{}, nil, nil
		}).View())
		require.True(t, strings.Contains(present.Text, prompt.PresenceLine))
		require.False(t, strings.Contains(absent.Text, prompt.PresenceLine))
		ps, _ := present.Split()
		as, _ := absent.Split()
		assert.Equal(t, as, ps)
	})
	type shares struct{ agents, cycle int }
	got := map[prompt.Layout]shares{}
	for _, l := range prompttest.Layouts() {
		a := assembler(l)
		cedar := prompttest.Assemble(t, a, prompttest.Cedar().View()).Text
		other := prompttest.Assemble(t, a, prompttest.Cedar().ID("vault").Edit(func(v *prompt.View) { v.Identity.Name = "Vault" }).View()).Text
		next := prompttest.Assemble(t, a, prompttest.Cedar().At(prompttest.DefaultNow.Add(6*time.Second)).
			Goal(identity.Active, "Read /agentOS/tools/dynamic/ again").
			Stressor("boredom", 0.3, "nothing new", "find something new").View()).Text
		got[l] = shares{prompttest.CommonPrefix(cedar, other), prompttest.CommonPrefix(cedar, next)}
		switch l {
		case prompt.LayoutCache:
			i := strings.Index(cedar, "You are Cedar.")
			require.Positive(t, i)
			assert.Equal(t, utf8.RuneCountInString(cedar[:i+len("You are ")]), got[l].agents, "two agents share all before their names")
			j := strings.Index(cedar, "WHAT YOU'VE BEEN DOING LATELY:")
			assert.Greater(t, got[l].cycle, j, "the next cycle differs only at the recent goals' end or later")
		case prompt.LayoutCacheAgent:
			assert.Equal(t, len("You are "), got[l].agents, "two agents share only what precedes their names")
			j := strings.Index(cedar, "WHAT YOU'VE BEEN DOING LATELY:")
			assert.Greater(t, got[l].cycle, j, "the next cycle differs only at the recent goals' end or later")
		}
	}
	t.Logf("characters shared (agents, next cycle): original %+v, cache %+v, cache-agent %+v", got[prompt.LayoutOriginal], got[prompt.LayoutCache], got[prompt.LayoutCacheAgent])
	assert.Less(t, got[prompt.LayoutOriginal].agents, 200, "the original starts with the task, then the name")
	assert.Greater(t, got[prompt.LayoutCache].agents, 2000)
	assert.Greater(t, got[prompt.LayoutCache].cycle, 2*got[prompt.LayoutOriginal].cycle)
	assert.Greater(t, got[prompt.LayoutCacheAgent].cycle, 2*got[prompt.LayoutOriginal].cycle)
}

// TestCacheLayoutBatches: under the cache layout a list's first shown item
// moves in batches: over twenty goals added one at a time, the recent
// goals' first line changes far fewer times than twenty, the list never
// shows more than the cap nor fewer than half of it, and the original
// shows exactly the last five each time.
func TestCacheLayoutBatches(t *testing.T) {
	for _, l := range prompttest.Layouts() {
		a := assembler(l)
		st := prompttest.NewState("Cedar")
		var firsts []string
		moves := 0
		for i := range 20 {
			st.Goal(identity.Done, "goal number "+string(rune('a'+i)))
			p := prompttest.Assemble(t, a, st.View())
			n := prompttest.ShownGoals(t, p)
			if l == prompt.LayoutOriginal {
				assert.Equal(t, min(i+1, 5), n)
			} else {
				assert.LessOrEqual(t, n, 5)
				assert.GreaterOrEqual(t, n, min(i+1, 3))
			}
			first := strings.SplitN(prompttest.SectionBody(t, p, prompt.SectionRecentGoals), "\n", 2)[0]
			if len(firsts) > 0 && first != firsts[len(firsts)-1] {
				moves++
			}
			firsts = append(firsts, first)
		}
		if l == prompt.LayoutOriginal {
			assert.Equal(t, 15, moves)
		} else {
			assert.Less(t, moves, 12, "batched")
		}
	}
}

func TestBatchStart(t *testing.T) {
	key := func(i int) string { return string(rune('a' + i%26)) }
	assert.Equal(t, 0, prompt.BatchStart(3, 5, key), "all shown")
	assert.Equal(t, 4, prompt.BatchStart(5, 1, key), "n 1: the last")
	prev := -1
	for length := 6; length < 60; length++ {
		s := prompt.BatchStart(length, 5, key)
		assert.GreaterOrEqual(t, s, length-5)
		assert.Less(t, s, length-5+3)
		assert.GreaterOrEqual(t, s, prev, "never back")
		prev = s
	}
	l, err := prompt.ParseLayout("cache")
	require.NoError(t, err)
	assert.Equal(t, prompt.LayoutCache, l)
	assert.Equal(t, "cache", l.String())
	l, err = prompt.ParseLayout("cache-agent")
	require.NoError(t, err)
	assert.Equal(t, prompt.LayoutCacheAgent, l)
	assert.Equal(t, "cache-agent", l.String())
	assert.True(t, l.Cache())
	assert.True(t, prompt.LayoutCache.Cache())
	assert.False(t, prompt.LayoutOriginal.Cache())
	l, err = prompt.ParseLayout("")
	require.NoError(t, err)
	assert.Equal(t, prompt.LayoutOriginal, l)
	_, err = prompt.ParseLayout("fast")
	assert.Error(t, err)
}

// TestCacheLayoutSplit: a cache layout's prompt splits at the end of its
// stable sections (the four every agent shares, and under the agent-first
// layout the identity before them; a section inserted after them starts
// the rest); the original's does not split.
func TestCacheLayoutSplit(t *testing.T) {
	v := prompttest.Cedar().View()
	p := prompttest.Assemble(t, assembler(prompt.LayoutOriginal), v)
	stable, rest := p.Split()
	assert.Empty(t, stable)
	assert.Equal(t, p.Text, rest)
	assert.Zero(t, p.StableEnd)

	for _, tc := range []struct {
		l           prompt.Layout
		first, last string // the stable prefix's first and last sections
		insertAfter string
		rest        string // how the rest begins
	}{
		{prompt.LayoutCache, prompt.SectionWorld, prompt.SectionResponseFormat, prompt.SectionResponseFormat, "YOUR PEERS:"},
		{prompt.LayoutCacheAgent, prompt.SectionIdentity, prompt.SectionResponseFormat, prompt.SectionIdentity, "YOUR WORLDVIEW:"},
	} {
		p = prompttest.Assemble(t, assembler(tc.l), v)
		stable, rest = p.Split()
		assert.Equal(t, p.Text, stable+"\n\n"+rest)
		assert.True(t, strings.HasPrefix(stable, prompttest.SectionWithHeader(t, p, tc.first)), tc.l)
		assert.True(t, strings.HasSuffix(stable, prompttest.SectionWithHeader(t, p, tc.last)), tc.l)
		assert.True(t, strings.HasPrefix(rest, tc.rest), rest)

		a := assembler(tc.l)
		require.NoError(t, a.InsertAfter(tc.insertAfter, prompt.SectionFunc{ID: "notes", Text: func(*prompt.View) string { return "NOTES:\n  x" }}))
		p = prompttest.Assemble(t, a, v)
		stable, rest = p.Split()
		assert.True(t, strings.HasPrefix(rest, "NOTES:"), rest)
		assert.True(t, strings.HasSuffix(stable, prompttest.SectionWithHeader(t, p, tc.insertAfter)), tc.l)
		assert.Equal(t, p.Text, stable+"\n\n"+rest)
	}
}
