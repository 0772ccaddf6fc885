package simulate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"sync"
	"time"

	"github.com/existence-loop/sdk/existence"
	"github.com/existence-loop/sdk/existence/event"
	"github.com/existence-loop/sdk/existence/toolloop"
	"github.com/existence-loop/sdk/existence/workspace"
	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/llm"
)

// ExecutorPolicy decides how simulated agents pursue their goals: what
// each goal ends with and how long it takes in simulated time. The agent
// runs the pursuit through its real [existence.Executor] seam; the
// simulation holds the goal's end until the virtual clock reaches it.
// Implementations: [Immediate], [Mix], [Report], [ToolLoop].
type ExecutorPolicy interface {
	// NewPursuer returns the pursuer of one agent's goals. seed is the
	// agent's own seed; env describes the run. Errors stop the simulation
	// before it starts.
	NewPursuer(agent AgentSpec, seed uint64, env Env) (Pursuer, error)
}

// Env is what a run offers executor policies.
type Env struct {
	// Workspace is the directory of the run's shared workspace (a
	// temporary directory unless [Config].Workspace is set).
	Workspace string
}

// Pursuer pursues one agent's goals, one at a time.
type Pursuer interface {
	// Pursue pursues the goal and returns its outcome, the simulated time
	// the pursuit took besides its model calls (calls made through
	// a.Model add their own simulated latency), and an error (which makes
	// the goal FAILED, as for any executor).
	Pursue(ctx context.Context, a existence.Assignment) (existence.Outcome, time.Duration, error)
}

// Immediate completes every goal at once with DONE, like
// [existence.Immediate].
type Immediate struct{}

// NewPursuer implements [ExecutorPolicy].
func (Immediate) NewPursuer(AgentSpec, uint64, Env) (Pursuer, error) { return immediate{}, nil }

type immediate struct{}

func (immediate) Pursue(ctx context.Context, a existence.Assignment) (existence.Outcome, time.Duration, error) {
	out, err := existence.Immediate.Execute(ctx, a)
	return out, 0, err
}

// Mix is a seeded [ExecutorPolicy] that draws each goal's outcome without
// calling a model: FAILED or ABANDONED with probability FailureRate
// (ABANDONED for AbandonShare of those), DONE otherwise, after Duration
// (default [DefaultGoalDuration]).
type Mix struct {
	FailureRate  float64
	AbandonShare float64
	Duration     Dist
}

// NewPursuer implements [ExecutorPolicy]. It fails when a probability is
// outside 0–1.
func (m Mix) NewPursuer(_ AgentSpec, seed uint64, _ Env) (Pursuer, error) {
	if !prob(m.FailureRate) || !prob(m.AbandonShare) {
		return nil, fmt.Errorf("simulate: Mix rates %v and %v must be in 0–1", m.FailureRate, m.AbandonShare)
	}
	if m.Duration == (Dist{}) {
		m.Duration = DefaultGoalDuration
	}
	return &mixPursuer{cfg: m, rng: newRand(seed)}, nil
}

func prob(p float64) bool { return !math.IsNaN(p) && p >= 0 && p <= 1 }

type mixPursuer struct {
	cfg Mix
	mu  sync.Mutex
	rng *rand.Rand
}

func (p *mixPursuer) Pursue(ctx context.Context, a existence.Assignment) (existence.Outcome, time.Duration, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	d := p.cfg.Duration.Draw(p.rng)
	if p.rng.Float64() < p.cfg.FailureRate {
		if p.rng.Float64() < p.cfg.AbandonShare {
			return existence.Outcome{Status: identity.Abandoned, Summary: "abandoned: the tools kept failing"}, d, nil
		}
		return existence.Outcome{Status: identity.Failed, Summary: "failed: nothing usable came of it"}, d, nil
	}
	return existence.Outcome{Status: identity.Done, Summary: "done"}, d, nil
}

// Report is an [ExecutorPolicy] that asks the agent's own (simulated)
// model how each goal ended: one request with [ReportInstruction] and
// [ReportSchema], answered with a [GoalReport]. The goal takes the call's
// latency plus the reported seconds. A reply that is not a valid report
// makes the goal FAILED, naming the problem.
type Report struct{}

// NewPursuer implements [ExecutorPolicy].
func (Report) NewPursuer(AgentSpec, uint64, Env) (Pursuer, error) { return reportPursuer{}, nil }

type reportPursuer struct{}

func (reportPursuer) Pursue(ctx context.Context, a existence.Assignment) (existence.Outcome, time.Duration, error) {
	resp, err := a.Model.Generate(ctx, &llm.Request{
		Messages: []llm.Message{{Role: llm.RoleSystem, Content: ReportInstruction}, {Role: llm.RoleUser, Content: a.Goal.Objective}},
		Format:   ReportSchema,
	})
	if err != nil {
		return existence.Outcome{Status: identity.Failed}, 0, err
	}
	var r GoalReport
	if err := json.Unmarshal([]byte(strings.TrimSpace(resp.Text)), &r); err != nil {
		return existence.Outcome{Status: identity.Failed}, 0, fmt.Errorf("simulate: goal report is not JSON: %w", err)
	}
	st := identity.GoalStatus(r.Status)
	if !st.Ended() {
		return existence.Outcome{Status: identity.Failed}, 0, fmt.Errorf("simulate: goal report status %q", r.Status)
	}
	if math.IsNaN(r.Seconds) || r.Seconds < 0 || r.Seconds > 1e7 {
		return existence.Outcome{Status: identity.Failed}, 0, fmt.Errorf("simulate: goal report seconds %v", r.Seconds)
	}
	d := time.Duration(math.Round(r.Seconds*1000)) * time.Millisecond
	return existence.Outcome{Status: st, Summary: r.Summary, Steps: 1, PromptTokens: resp.PromptTokens, OutputTokens: resp.OutputTokens}, d, nil
}

// ToolLoop is an [ExecutorPolicy] that pursues goals with the real
// model/tool loop ([toolloop.Executor]) over the sandboxed file tools of
// the run's workspace ([workspace.Workspace]; a temporary directory unless
// [Config].Workspace is set). Every turn is a call to the agent's simulated
// model; a goal takes the sum of their latencies plus StepTime per tool
// call.
type ToolLoop struct {
	// MaxSteps is the step budget in model turns; default 20.
	MaxSteps int
	// StepTime is the simulated time of one tool call; default 1 s.
	StepTime time.Duration
}

// NewPursuer implements [ExecutorPolicy]. Errors: those of
// [workspace.Open] and [toolloop.New].
func (t ToolLoop) NewPursuer(_ AgentSpec, _ uint64, env Env) (Pursuer, error) {
	if env.Workspace == "" {
		return nil, errors.New("simulate: ToolLoop needs a workspace directory")
	}
	ws, err := workspace.Open(env.Workspace, workspace.Limits{})
	if err != nil {
		return nil, err
	}
	ex, err := toolloop.New(toolloop.Config{Tools: ws.Tools(), MaxSteps: t.MaxSteps})
	if err != nil {
		ws.Close()
		return nil, err
	}
	if t.StepTime <= 0 {
		t.StepTime = time.Second
	}
	return &toolPursuer{ws: ws, ex: ex, step: t.StepTime}, nil
}

type toolPursuer struct {
	ws   *workspace.Workspace
	ex   *toolloop.Executor
	step time.Duration
}

func (p *toolPursuer) Pursue(ctx context.Context, a existence.Assignment) (existence.Outcome, time.Duration, error) {
	calls := 0
	report := a.Report
	a.Report = func(e event.Event) {
		if e.Kind == event.ToolCall {
			calls++
		}
		if report != nil {
			report(e)
		}
	}
	out, err := p.ex.Execute(ctx, a)
	return out, time.Duration(calls) * p.step, err
}

func (p *toolPursuer) Close() error { return p.ws.Close() }
