package simulate_test

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/existence/event"
	"github.com/existence-loop/sdk/existence/simulate"
	"github.com/existence-loop/sdk/llm"
	"github.com/existence-loop/sdk/slot"
)

// worldMonth is a month of the trio with a 1 h heartbeat, fed by three
// sources posting every 6 hours, half of them notifying, a third to one
// agent's own board.
func worldMonth(seed uint64, w simulate.World) simulate.Config {
	return simulate.Config{
		Duration:  30 * 24 * time.Hour,
		Heartbeat: time.Hour,
		Seed:      seed,
		Model:     simulate.Stochastic{FailureRate: 0.3, StressorRate: 0.05, ResolveRate: 0.05},
		World:     w,
	}
}

// slotLog runs cfg and returns its trajectory, its result, and every slot
// event and the prompts that showed a slot, as lines.
func slotLog(t *testing.T, cfg simulate.Config) ([]byte, *simulate.Result, string) {
	t.Helper()
	var mu sync.Mutex
	var log strings.Builder
	cfg.Observer = func(e event.Event) {
		if e.Kind == event.Slot || e.Kind == event.SlotDropped {
			mu.Lock()
			log.WriteString(e.String() + "\n")
			mu.Unlock()
		}
	}
	var buf bytes.Buffer
	cfg.Trajectory = &buf
	res, err := simulate.Run(context.Background(), cfg)
	require.NoError(t, err)
	return buf.Bytes(), res, log.String()
}

// TestWorldMonthReplaysFromASeed: a month of a world feeding the trio
// replays the same from the same seed (trajectory, slot events and
// counts); another seed gives another world; notifying slots ask for
// cycles between heartbeats.
func TestWorldMonthReplaysFromASeed(t *testing.T) {
	world := simulate.RandomWorld{Sources: 3, Every: 6 * time.Hour, Notify: 0.5, PerAgent: 0.3}
	a, resA, logA := slotLog(t, worldMonth(1, world))
	b, resB, logB := slotLog(t, worldMonth(1, world))
	assert.True(t, bytes.Equal(a, b), "the same seed, the same trajectory")
	assert.Equal(t, logA, logB, "the same seed, the same slot events")
	assert.Equal(t, resA, resB)
	_, _, logC := slotLog(t, worldMonth(2, world))
	assert.NotEqual(t, logA, logC, "another seed, another world")

	own := 0
	for _, ag := range resA.Agents {
		own += ag.SlotUpdates
	}
	total := resA.SharedUpdates + own
	assert.InDelta(t, 3*30*4, total, 40, "three sources every 6 hours for 30 days")
	assert.Greater(t, own, 0)
	assert.Greater(t, resA.SharedUpdates, own)
	assert.Greater(t, resA.Triggers, int64(0), "notifying slots asked for cycles")
	assert.Equal(t, total, strings.Count(logA, "📌"), "one event per update")

	quiet := world
	quiet.Notify = 0
	_, resQ, _ := slotLog(t, worldMonth(1, quiet))
	assert.Zero(t, resQ.Triggers)
	cycles := func(r *simulate.Result) (n int) {
		for _, ag := range r.Agents {
			n += ag.Cycles
		}
		return n
	}
	assert.Greater(t, cycles(resA), cycles(resQ), "notifications run cycles between the heartbeats")
}

// promptLog is a model that records every prompt and answers with a goal.
type promptLog struct {
	mu      sync.Mutex
	prompts []string
}

func (p *promptLog) Generate(_ context.Context, req *llm.Request) (*llm.Response, error) {
	p.mu.Lock()
	p.prompts = append(p.prompts, req.Messages[0].Content)
	p.mu.Unlock()
	return &llm.Response{Text: `{"action":"goal","content":"look","reasoning":"r"}`, DoneReason: llm.DoneStop, Duration: time.Second}, nil
}

type promptPolicy struct{ m *promptLog }

func (p promptPolicy) Model(simulate.AgentSpec, uint64) (llm.Model, error) { return p.m, nil }

// TestScriptReachesThePrompt: a scripted notifying slot is read by a cycle
// at its virtual time, between heartbeats; the default prompt shows it.
func TestScriptReachesThePrompt(t *testing.T) {
	m := &promptLog{}
	res, err := simulate.Run(context.Background(), simulate.Config{
		Agents:    simulate.Agents(1),
		Duration:  time.Hour,
		Heartbeat: 10 * time.Minute,
		Model:     promptPolicy{m},
		Executor:  simulate.Immediate{},
		World: simulate.Script{
			{At: 25 * time.Minute, Agent: "scout", Slot: slot.Slot{ID: "door", Title: "Front door", Status: "changed", Summary: "someone rang", NotifyUser: true}},
		},
	})
	require.NoError(t, err)
	assert.Equal(t, int64(1), res.Triggers)
	assert.Equal(t, 1, res.Agents[0].SlotUpdates)
	var shown []int
	for i, p := range m.prompts {
		if strings.Contains(p, "  - Front door: changed - someone rang") {
			shown = append(shown, i)
		}
	}
	require.NotEmpty(t, shown)
	assert.Equal(t, 3, shown[0], "heartbeats at 0, 10 and 20 minutes, then the notification at 25")
	assert.Len(t, m.prompts, 7, "six heartbeats and one triggered cycle")

	for _, bad := range []simulate.Script{
		{{At: time.Minute, Agent: "nobody", Slot: slot.Slot{ID: "x", Status: slot.Idle}}},
		{{At: -time.Minute, Slot: slot.Slot{ID: "x", Status: slot.Idle}}},
		{{At: time.Minute, Slot: slot.Slot{ID: "x"}}},
	} {
		_, err := simulate.Run(context.Background(), simulate.Config{Agents: simulate.Agents(1), Duration: time.Hour, World: bad})
		require.ErrorIs(t, err, simulate.ErrConfig)
	}
	_, err = simulate.Run(context.Background(), simulate.Config{Agents: simulate.Agents(1), Duration: time.Hour, Driver: simulate.Heartbeats, World: simulate.Script{}})
	require.ErrorIs(t, err, simulate.ErrConfig, "a World needs the Scheduler driver")
}
