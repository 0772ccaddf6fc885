package existencetest_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/existence-loop/sdk/existence"
	"github.com/existence-loop/sdk/existence/event"
	"github.com/existence-loop/sdk/existence/existencetest"
	"github.com/existence-loop/sdk/llm/llmtest"
)

// A test drives an agent with a scripted model, a manual clock and a
// Recorder, then checks what the agent did through its events: no network,
// no sleep, the same events at the same times on every run.
func ExampleRecorder() {
	ctx := context.Background()
	clock := existencetest.NewClock(time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC))
	rec := &existencetest.Recorder{}
	model := llmtest.NewFake(llmtest.Reply{Text: `{"action":"goal","content":"map the workspace","reasoning":"new here"}`})
	a, err := existence.New(ctx, existence.Config{
		ID: "scout", Name: "Cedar", Model: model, Timing: existence.TimingConfig{Clock: clock}, Observer: rec.Observe,
	})
	if err != nil {
		log.Fatal(err)
	}
	defer a.Close()

	if err := a.Tick(ctx); err != nil {
		log.Fatal(err)
	}
	for _, e := range rec.Events() {
		fmt.Println(e.Time.Format(time.TimeOnly), e.AgentID, e.Kind)
	}
	chosen := rec.Kind(event.GoalChosen)
	fmt.Printf("%d goal: %s (%s)\n", len(chosen), chosen[0].Goal, chosen[0].Reasoning)
	// Output:
	// 12:00:00 scout model_call
	// 12:00:00 scout goal_chosen
	// 12:00:00 scout cycle
	// 1 goal: map the workspace (new here)
}

// A Clock's time moves only when the test says so: a ticker fires once the
// manual time passes its next tick, never on its own.
func ExampleClock() {
	clock := existencetest.NewClock(time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC))
	ticks, stop := clock.NewTicker(6 * time.Second) // an agent's heartbeat
	defer stop()

	for _, d := range []time.Duration{4 * time.Second, 4 * time.Second, 10 * time.Second} {
		clock.Advance(d)
		select {
		case t := <-ticks:
			fmt.Println(clock.Now().Format(time.TimeOnly), "tick at", t.Format(time.TimeOnly))
		default:
			fmt.Println(clock.Now().Format(time.TimeOnly), "no tick")
		}
	}
	// Output:
	// 12:00:04 no tick
	// 12:00:08 tick at 12:00:06
	// 12:00:18 tick at 12:00:12
}
