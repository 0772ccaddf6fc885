package existence_test

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/existence-loop/sdk/existence"
	"github.com/existence-loop/sdk/existence/runner"
	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/llm/llmtest"
	"github.com/existence-loop/sdk/llm/middleware"
	"github.com/existence-loop/sdk/prompt"
	"github.com/existence-loop/sdk/store/memstore"
	"github.com/existence-loop/sdk/suffering"
)

const benchReply = `{"action": "goal",
  "content": "Read design/index.md and write a one-page map of what exists, with paths",
  "reasoning": "Cipher said my last map was wrong; I want to see for myself",
  "worldview_update": "The workspace is the only shared memory we have; what is not written down is gone.",
  "new_open_questions": ["Does anyone read analyst/review.md?"],
  "new_opinions": [{"opinion": "A map with paths beats a summary without them", "domain": "method"}],
  "suffering_assessment": {"new_stressors": [{"type": "invisibility", "description": "no one cites my notes", "condition": "a peer cites a note of mine"}], "resolved": []}}`

// benchState is a representative mid-life agent: full opinions and
// questions, a long narrative, goal history, stressors and peer messages.
func benchState() *identity.AgentState {
	l := identity.DefaultLimits()
	st := &identity.AgentState{Identity: identity.New("scout", "Cedar", t0)}
	id := &st.Identity
	id.SetWorldview("Everything I know I wrote down; everything else is gone by the next cycle.", l)
	for i := range 20 {
		id.AddOpinion(identity.Opinion{Text: fmt.Sprintf("opinion number %d about the state of the workspace", i), Domain: "workspace", Formed: t0}, l)
		id.AddQuestion(fmt.Sprintf("open question %d: who reads what we write?", i), l)
	}
	for i := range 12 {
		_ = id.StartGoal(identity.Goal{ID: fmt.Sprint(i), Objective: fmt.Sprintf("goal %d: map the workspace and write it down", i), Started: t0}, l)
		_, _ = id.EndGoal(identity.Done, "wrote scout/map.md", t0.Add(time.Minute), l)
	}
	_, _ = st.Suffering.Add(t0, suffering.Input{Type: "invisibility", Description: "no one cites my notes", Condition: "a peer cites one", Severity: 0.4})
	st.Inbox = []identity.AgentMessage{{From: "Cipher", Text: "your map misses design/"}}
	return st
}

// BenchmarkCycle measures one full existence cycle without I/O, as Tick
// runs it with the built-in sections: assemble the prompt straight from the
// state (under the agent's lock, no copy), parse the model's reply, apply
// it to the state. The state is a mid-life agent at its caps, so every
// cycle does the same work (an opinion slides in, the question is already
// held, the stressor is already active). It runs alone in a tiny heap,
// where the GC runs every few hundred cycles; see BenchmarkCyclePopulation
// for the same cycle in a process that holds a population, and
// BenchmarkCycleCustomSection for the copy a custom section adds.
func BenchmarkCycle(b *testing.B) {
	benchCycle(b)
}

// BenchmarkCyclePopulation is BenchmarkCycle in a process that holds 10,000
// agents in a Runner, as examples/swarm does at the start of a run (a
// live heap of about 40 MB; the agents are added, not run). The GC then
// runs far less often than in BenchmarkCycle's tiny heap, and marks more
// when it does: what a cycle costs in a process that runs thousands of
// agents.
func BenchmarkCyclePopulation(b *testing.B) {
	ctx := context.Background()
	r, err := runner.New(runner.Config{Store: memstore.New()})
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	model := llmtest.NewFake()
	for i := range 10000 {
		id := fmt.Sprintf("agent-%05d", i)
		if _, err := r.Add(ctx, existence.Config{ID: id, Name: "Agent " + id, Model: model}); err != nil {
			b.Fatal(err)
		}
	}
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	benchCycle(b)
	b.ReportMetric(float64(ms.HeapAlloc)/(1<<20), "live-MB")
}

func benchCycle(b *testing.B) {
	asm := prompt.New(prompt.Config{World: "A workspace directory.", Situation: prompt.DefaultSituation, Goals: []string{"read", "build"}, Prohibitions: "hardware"})
	benchCycleWith(b, asm)
}

// BenchmarkCycleCustomSection is BenchmarkCycle with one custom section:
// the cycle then copies the identity, suffering and messages for the
// prompt, and assembles it outside the agent's lock.
func BenchmarkCycleCustomSection(b *testing.B) {
	asm := prompt.New(prompt.Config{World: "A workspace directory.", Situation: prompt.DefaultSituation, Goals: []string{"read", "build"}, Prohibitions: "hardware"})
	if err := asm.InsertAfter(prompt.SectionTime, prompt.SectionFunc{ID: "mood", Text: func(*prompt.View) string { return "MOOD: curious" }}); err != nil {
		b.Fatal(err)
	}
	benchCycleWith(b, asm)
}

func benchCycleWith(b *testing.B, asm *prompt.Assembler) {
	st := benchState()
	peers := []prompt.Peer{{ID: "analyst", Name: "Cipher", Narrative: "I review."}, {ID: "builder", Name: "Vault", Narrative: "I build."}}
	now := t0.Add(time.Hour)
	b.ReportAllocs()
	for b.Loop() {
		v := &prompt.View{Now: now, Identity: &st.Identity, Suffering: &st.Suffering, Peers: peers, Inbox: st.Inbox}
		p, builtin, err := asm.AssembleBuiltin(v)
		if !builtin {
			id, sf := st.Identity.Clone(), st.Suffering.Clone()
			v = &prompt.View{Now: now, Identity: &id, Suffering: &sf, Peers: peers, Inbox: slices.Clone(st.Inbox)}
			p, err = asm.Assemble(v)
		}
		if err != nil || p == nil {
			b.Fatal(err)
		}
		r, err := prompt.ParseResponse(benchReply)
		if err != nil {
			b.Fatal(err)
		}
		existence.Apply(st, r, now, identity.Limits{})
	}
}

// BenchmarkTick measures a heartbeat that runs a cycle end to end against a
// scripted model and an in-memory store (escalation, assessment, prompt,
// model call, parse, apply, save, executor start and finish).
func BenchmarkTick(b *testing.B) {
	fake := llmtest.NewFake(llmtest.Reply{Text: benchReply})
	fake.Repeat = true
	store := memstore.New()
	if err := store.Save(context.Background(), benchState()); err != nil {
		b.Fatal(err)
	}
	a, err := existence.New(context.Background(), existence.Config{ID: "scout", Name: "Cedar", Model: fake, Store: store, Calls: existence.CallConfig{Retry: middleware.RetryPolicy{Attempts: 1}}})
	if err != nil {
		b.Fatal(err)
	}
	defer a.Close()
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if err := a.Tick(ctx); err != nil {
			b.Fatal(err)
		}
		if err := a.WaitGoal(ctx); err != nil {
			b.Fatal(err)
		}
	}
}
