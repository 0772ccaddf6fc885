package simulate

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/existence-loop/sdk/existence/trio"
	"github.com/existence-loop/sdk/internal/repeat"
	"github.com/existence-loop/sdk/llm"
	"github.com/existence-loop/sdk/prompt"
	"github.com/existence-loop/sdk/suffering"
)

// ModelPolicy makes the simulated model of each agent. Every model it
// returns is an [llm.Model] that the agent wraps and calls exactly as it
// would a real one (prompt assembly, structured output, parsing, repair and
// validation all run for real).
//
// A simulated model says how long a call took in simulated time through
// [llm.Response].Duration, or, for a failed call, through an error made by
// [WithLatency]; the simulation advances the agent's virtual clock by that
// much (plus any wait for a model slot, see [Config].ModelSlots). It never
// sleeps.
//
// A model receives three kinds of request: existence cycles (the prompt,
// with the response schema as Format), outcome reports from the [Report]
// executor (Format is [ReportSchema]) and tool-loop turns from the
// [ToolLoop] executor (Tools is set). Implementations: [Scripted],
// [Stochastic], [Replay].
type ModelPolicy interface {
	// Model returns the model of one agent. seed is the agent's own seed,
	// derived from [Config].Seed and the agent's position, so that agents
	// draw independently of each other and of the order they run in.
	// Errors stop the simulation before it starts.
	Model(agent AgentSpec, seed uint64) (llm.Model, error)
}

// latencyError carries the simulated duration of a failed call.
type latencyError struct {
	err     error
	latency time.Duration
}

func (e *latencyError) Error() string { return e.err.Error() }
func (e *latencyError) Unwrap() error { return e.err }

// WithLatency wraps err, the failure of a simulated model call, with the
// simulated time the call took before failing (for example a timeout's
// whole duration). errors.Is and errors.As see through it.
func WithLatency(err error, latency time.Duration) error {
	if err == nil {
		return nil
	}
	return &latencyError{err: err, latency: latency}
}

// latencyOf returns the simulated duration of a call's result.
func latencyOf(resp *llm.Response, err error) time.Duration {
	var le *latencyError
	if errors.As(err, &le) {
		return max(0, le.latency)
	}
	if resp != nil {
		return max(0, resp.Duration)
	}
	return 0
}

// Dist is a distribution of simulated durations. Draws are rounded to whole
// milliseconds, so that they are the same on every platform.
type Dist struct {
	// Min and Max bound every draw. With Max ≤ Min every draw is Min.
	Min, Max time.Duration
	// Median, when set, makes the draw log-normal with this median and
	// Sigma (default 0.5), clamped to Min–Max; otherwise draws are uniform
	// in Min–Max.
	Median time.Duration
	Sigma  float64
}

// Fixed returns a [Dist] that always draws d.
func Fixed(d time.Duration) Dist { return Dist{Min: d, Max: d} }

// Draw draws one duration from r.
func (d Dist) Draw(r *rand.Rand) time.Duration {
	if d.Max <= d.Min {
		return d.Min.Round(time.Millisecond)
	}
	var v float64
	if d.Median > 0 {
		sigma := d.Sigma
		if sigma <= 0 {
			sigma = 0.5
		}
		v = float64(d.Median) * math.Exp(sigma*r.NormFloat64())
	} else {
		v = float64(d.Min) + r.Float64()*float64(d.Max-d.Min)
	}
	v = min(max(v, float64(d.Min)), float64(d.Max))
	return time.Duration(math.Round(v/float64(time.Millisecond))) * time.Millisecond
}

// ReportInstruction is the system message of the [Report] executor's
// request: the model pursues the goal off-screen and reports how it ended.
const ReportInstruction = "SIMULATED GOAL PURSUIT: report how this goal ended, as JSON with status (DONE, FAILED or ABANDONED), summary and seconds (the simulated time the pursuit took)."

// ReportSchema is the JSON Schema ([llm.Request].Format) of a
// [Report] executor's request; the reply is a [GoalReport].
var ReportSchema = json.RawMessage(`{"type":"object","properties":{"status":{"type":"string","enum":["DONE","FAILED","ABANDONED"]},"summary":{"type":"string"},"seconds":{"type":"number","minimum":0}},"required":["status","summary"]}`)

// GoalReport is a model's reply to a [Report] executor: how a goal ended
// and how long it took in simulated seconds.
type GoalReport struct {
	Status  string  `json:"status"`
	Summary string  `json:"summary"`
	Seconds float64 `json:"seconds,omitempty"`
}

// kind of a request.
type requestKind int

const (
	cycleRequest requestKind = iota
	reportRequest
	toolRequest
)

func kindOf(req *llm.Request) requestKind {
	switch {
	case req == nil:
		return cycleRequest
	case len(req.Tools) > 0:
		return toolRequest
	case len(req.Messages) > 0 && req.Messages[0].Role == llm.RoleSystem && req.Messages[0].Content == ReportInstruction:
		return reportRequest
	}
	return cycleRequest
}

// lastUser returns the text of the last user message of req.
func lastUser(req *llm.Request) string {
	if req == nil {
		return ""
	}
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if req.Messages[i].Role == llm.RoleUser {
			return req.Messages[i].Content
		}
	}
	return ""
}

// tokens is a rough token count (4 bytes a token) for simulated replies.
func tokens(s string) int { return (len(s) + 3) / 4 }

// Scripted is a [ModelPolicy] whose models answer every request with the
// next of Replies, starting over after the last; each agent has its own
// position in the list. Every call takes Latency of simulated time.
//
// A list shorter than 11 distinct goals (the repeat window of 10, plus one) makes the
// agent repeat its goals: each repeat is an [event.GoalRepeat]
// and counts as a failure toward repeated_failure (spec §4). Give at
// least 11 different goals, or a policy of your own, to avoid that.
type Scripted struct {
	// Replies are the reply texts, in order (at least one).
	Replies []string
	// Latency is the simulated duration of every call.
	Latency time.Duration
}

// Model implements [ModelPolicy]. It fails when Replies is empty.
func (s Scripted) Model(agent AgentSpec, _ uint64) (llm.Model, error) {
	if len(s.Replies) == 0 {
		return nil, errors.New("simulate: Scripted has no replies")
	}
	return &scriptedModel{replies: s.Replies, latency: s.Latency}, nil
}

type scriptedModel struct {
	mu      sync.Mutex
	replies []string
	next    int
	latency time.Duration
}

func (m *scriptedModel) Generate(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.mu.Lock()
	text := m.replies[m.next%len(m.replies)]
	m.next++
	m.mu.Unlock()
	return &llm.Response{Model: "scripted", Text: text, DoneReason: llm.DoneStop, PromptTokens: tokens(lastUser(req)), OutputTokens: tokens(text), Duration: m.latency}, nil
}

// Defaults of [Stochastic].
var (
	// DefaultLatency is the latency of an existence cycle's model call:
	// log-normal around 8 s, between 2 s and 60 s (a 9B model on one
	// local GPU).
	DefaultLatency = Dist{Min: 2 * time.Second, Max: 60 * time.Second, Median: 8 * time.Second, Sigma: 0.5}
	// DefaultGoalDuration is how long a goal takes: uniform in 15–60 s
	// (spec §1).
	DefaultGoalDuration = Dist{Min: 15 * time.Second, Max: 60 * time.Second}
)

// Stochastic is a seeded [ModelPolicy]. Its model draws, from its agent's
// own random stream:
//
//   - for an existence cycle: a goal (from Goals, made distinct from the
//     model's last 10 goals, see RepeatRate), with probability
//     StressorRate one self-reported stressor (from StressorTypes), for
//     each stressor the prompt's inner-state section shows, with
//     probability ResolveRate a resolution, and now and then an opinion, an
//     open question or a worldview update; with probability
//     ModelFailureRate the call fails instead (the agent then uses the
//     spec §6 fallback goal);
//   - for a goal's outcome ([Report] and [ToolLoop] executors): FAILED or
//     ABANDONED with probability FailureRate (ABANDONED for AbandonShare of
//     those), DONE otherwise, taking GoalDuration;
//   - for every call, a latency from Latency.
//
// Zero fields take the defaults given per field.
type Stochastic struct {
	// FailureRate is the probability (0–1) that a goal does not succeed.
	// With 1, every goal fails and repeated_failure appears; with 0 (and
	// RepeatRate 0), it never does.
	FailureRate float64
	// AbandonShare is the share (0–1) of unsuccessful goals that are
	// ABANDONED rather than FAILED (ABANDONED counts as a stall).
	AbandonShare float64
	// StressorRate is the probability (0–1) that a cycle's reply
	// self-reports a new stressor. Negative means 0; 0 means 0.003 (with
	// a cycle a minute, about 4 a day).
	StressorRate float64
	// ResolveRate is the probability (0–1) that a cycle's reply reports
	// each stressor it can see as resolved. A model sees its stressors
	// only when the load is prominent (≥ 0.35, spec §4). Negative means
	// 0; 0 means 0.002 (about 3 a day).
	ResolveRate float64
	// ModelFailureRate is the probability (0–1) that a cycle's call fails
	// (an unavailable server).
	ModelFailureRate float64
	// Latency is the duration of one call; default [DefaultLatency].
	Latency Dist
	// GoalDuration is the time a goal's pursuit takes besides its model
	// calls; default [DefaultGoalDuration].
	GoalDuration Dist
	// Goals are the goals drawn from; default a list by role (the agent's
	// first domain: scout, analyst, builder). A drawn goal that would
	// nearly repeat one of the model's last 10 goals (a token-set
	// similarity of at least 0.9, the existence package's repeat rule)
	// gets a "(pass N)" suffix that makes it a new goal, so that a short
	// list does not read as going round in circles.
	Goals []string
	// RepeatRate is the probability (0–1) that a cycle's goal repeats the
	// model's previous goal word for word instead: a model going round in
	// circles, which the agent reports as an [event.GoalRepeat]
	// and counts toward repeated_failure (spec §4). 0 never repeats.
	RepeatRate float64
	// StressorTypes are the self-reported stressor types drawn from;
	// default invisibility, identity_violation, existential_threat and
	// uncertainty (the assessment owns repeated_failure, futility and
	// purposelessness, spec §4).
	StressorTypes []string
}

func (s Stochastic) withDefaults() Stochastic {
	switch {
	case s.StressorRate < 0:
		s.StressorRate = 0
	case s.StressorRate == 0:
		s.StressorRate = 0.003
	}
	switch {
	case s.ResolveRate < 0:
		s.ResolveRate = 0
	case s.ResolveRate == 0:
		s.ResolveRate = 0.002
	}
	if s.Latency == (Dist{}) {
		s.Latency = DefaultLatency
	}
	if s.GoalDuration == (Dist{}) {
		s.GoalDuration = DefaultGoalDuration
	}
	if len(s.StressorTypes) == 0 {
		s.StressorTypes = []string{suffering.Invisibility, suffering.IdentityViolation, suffering.ExistentialThreat, "uncertainty"}
	}
	return s
}

// Model implements [ModelPolicy]. It fails when a probability is outside
// 0–1.
func (s Stochastic) Model(agent AgentSpec, seed uint64) (llm.Model, error) {
	for _, p := range []struct {
		name string
		v    float64
	}{{"FailureRate", s.FailureRate}, {"AbandonShare", s.AbandonShare}, {"StressorRate", s.StressorRate}, {"ResolveRate", s.ResolveRate}, {"ModelFailureRate", s.ModelFailureRate}, {"RepeatRate", s.RepeatRate}} {
		if math.IsNaN(p.v) || p.v > 1 || (p.v < 0 && p.name != "StressorRate" && p.name != "ResolveRate") {
			return nil, fmt.Errorf("simulate: Stochastic.%s is %v, want 0–1", p.name, p.v)
		}
	}
	s = s.withDefaults()
	goals := s.Goals
	if len(goals) == 0 {
		goals = roleGoals(agent)
	}
	return &stochasticModel{cfg: s, agent: agent, goals: goals, rng: newRand(seed)}, nil
}

type stochasticModel struct {
	cfg   Stochastic
	agent AgentSpec
	goals []string

	mu  sync.Mutex
	rng *rand.Rand
	n   int // cycles answered
	// recent are the model's last goals, newest last (at most
	// repeat.Window).
	recent []string
	plan   string // the outcome being played out in a tool loop
	turn   int
}

// shownStressor matches a stressor line of the inner-state fragment
// (spec §4): "  [##........] repeated_failure 0.28  description".
var shownStressor = regexp.MustCompile(`(?m)^  \[[#.]{10}\] (\S+) \d\.\d\d  `)

func (m *stochasticModel) Generate(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	latency := m.cfg.Latency.Draw(m.rng)
	var text string
	var tcalls []llm.ToolCall
	switch kindOf(req) {
	case reportRequest:
		status, summary := m.outcome()
		secs := m.cfg.GoalDuration.Draw(m.rng).Seconds()
		b, _ := json.Marshal(GoalReport{Status: status, Summary: summary, Seconds: secs})
		text = string(b)
	case toolRequest:
		text, tcalls = m.toolTurn(req)
	default:
		if m.rng.Float64() < m.cfg.ModelFailureRate {
			return nil, WithLatency(fmt.Errorf("simulate: %w: simulated outage", llm.ErrUnavailable), latency)
		}
		text = m.cycle(lastUser(req))
	}
	return &llm.Response{Model: "stochastic", Text: text, ToolCalls: tcalls, DoneReason: doneReason(tcalls), PromptTokens: tokens(lastUser(req)), OutputTokens: tokens(text), Duration: latency}, nil
}

func doneReason(calls []llm.ToolCall) string {
	if len(calls) > 0 {
		return llm.DoneToolCalls
	}
	return llm.DoneStop
}

// outcome draws how a goal ends and a summary for it.
func (m *stochasticModel) outcome() (status, summary string) {
	if m.rng.Float64() < m.cfg.FailureRate {
		if m.rng.Float64() < m.cfg.AbandonShare {
			return "ABANDONED", "abandoned: the tools kept failing"
		}
		return "FAILED", "failed: nothing usable came of it"
	}
	return "DONE", "done"
}

// toolTurn plays out a drawn outcome through the real tool loop: DONE
// writes a note and answers; FAILED answers with nothing (the artifact
// check fails the goal); ABANDONED calls a tool that does not exist until
// the loop gives up.
func (m *stochasticModel) toolTurn(req *llm.Request) (string, []llm.ToolCall) {
	assistantTurns := 0
	for _, msg := range req.Messages {
		if msg.Role == llm.RoleAssistant {
			assistantTurns++
		}
	}
	if assistantTurns == 0 {
		m.plan, _ = m.outcome()
		m.turn = 0
	}
	m.turn++
	switch m.plan {
	case "DONE":
		if assistantTurns == 0 {
			args, _ := json.Marshal(map[string]string{"path": fmt.Sprintf("%s/note-%d.md", m.agent.ID, m.n), "content": "# note\n\n" + firstLine(lastUser(req)) + "\n"})
			return "", []llm.ToolCall{{Name: "write_file", Arguments: args}}
		}
		return "wrote a note about the goal", nil
	case "FAILED":
		return " ", nil
	default:
		return "", []llm.ToolCall{{Name: "simulated_missing_tool", Arguments: json.RawMessage(`{}`)}}
	}
}

// cycle draws an existence-cycle reply (a [prompt.Response], spec §3) to
// the prompt text.
func (m *stochasticModel) cycle(text string) string {
	m.n++
	r := m.rng
	g := m.goals[r.IntN(len(m.goals))]
	if len(m.recent) > 0 && m.cfg.RepeatRate > 0 && r.Float64() < m.cfg.RepeatRate {
		g = m.recent[len(m.recent)-1]
	} else {
		g = m.distinct(g)
	}
	m.recent = append(m.recent, g)
	if len(m.recent) > repeat.Window {
		m.recent = m.recent[1:]
	}
	rep := prompt.Response{
		Action:           "goal",
		Content:          g,
		Reasoning:        "simulated: drawn from the goal list",
		NewOpenQuestions: []string{},
		NewOpinions:      []prompt.NewOpinion{},
	}
	if r.Float64() < 0.2 {
		rep.NewOpinions = append(rep.NewOpinions, prompt.NewOpinion{Opinion: fmt.Sprintf("opinion %d of %s: %s", m.n, m.agent.Name, g), Domain: firstOr(m.agent.Domains, "work")})
	}
	if r.Float64() < 0.2 {
		rep.NewOpenQuestions = append(rep.NewOpenQuestions, fmt.Sprintf("question %d: does anyone use what %s makes?", m.n, m.agent.Name))
	}
	if r.Float64() < 0.05 {
		w := fmt.Sprintf("worldview %d: what is not written down is gone by the next cycle.", m.n)
		rep.WorldviewUpdate = &w
	}
	sa := &prompt.SufferingAssessment{NewStressors: []prompt.NewStressor{}, Resolved: []prompt.Resolution{}}
	if r.Float64() < m.cfg.StressorRate {
		typ := m.cfg.StressorTypes[r.IntN(len(m.cfg.StressorTypes))]
		sa.NewStressors = append(sa.NewStressors, prompt.NewStressor{Type: typ, Description: "simulated " + strings.ReplaceAll(typ, "_", " ") + " felt at cycle " + fmt.Sprint(m.n), Condition: "a peer responds to my work"})
	}
	for _, mt := range shownStressor.FindAllStringSubmatch(innerState(text), -1) {
		if r.Float64() < m.cfg.ResolveRate {
			sa.Resolved = append(sa.Resolved, prompt.Resolution{Type: mt[1], Reason: "simulated: the condition was met"})
		}
	}
	rep.SufferingAssessment = sa
	b, _ := json.Marshal(rep)
	return string(b)
}

// distinct returns g, or g with a "(pass N)" suffix (N the cycle number,
// plus more cycle-unique words if needed) when g would nearly repeat one of
// the model's recent goals.
func (m *stochasticModel) distinct(g string) string {
	out := g
	for extra := 0; m.repeats(out); extra++ {
		words := []string{fmt.Sprint("pass ", m.n)}
		for j := 1; j <= extra; j++ {
			words = append(words, fmt.Sprintf("%dx%d", m.n, j))
		}
		out = g + " (" + strings.Join(words, " ") + ")"
	}
	return out
}

// repeats reports whether g nearly repeats one of the model's recent goals.
func (m *stochasticModel) repeats(g string) bool {
	for _, r := range m.recent {
		if repeat.Similarity(g, r) >= repeat.Threshold {
			return true
		}
	}
	return false
}

// innerState returns the "YOUR INNER STATE:" section of a prompt (up to the
// next blank line).
func innerState(prompt string) string {
	i := strings.Index(prompt, "YOUR INNER STATE:")
	if i < 0 {
		return ""
	}
	s := prompt[i:]
	if j := strings.Index(s, "\n\n"); j >= 0 {
		s = s[:j]
	}
	return s
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if r := []rune(s); len(r) > 120 {
		s = string(r[:120])
	}
	return s
}

func firstOr(xs []string, def string) string {
	if len(xs) > 0 {
		return xs[0]
	}
	return def
}

// roleGoals returns default goals for an agent by its role (its first
// domain when the role is empty).
func roleGoals(a AgentSpec) []string {
	common := []string{
		"read what my peers wrote last and answer one of their open questions",
		"write down what I learned today so that the next cycle can use it",
	}
	switch cmp.Or(a.Role, firstOr(a.Domains, "")) {
	case trio.Scout:
		return append([]string{
			"map the workspace and write the map to scout/map.md with paths",
			"read the newest files in the workspace and report what changed",
			"find a file nobody has read yet and summarise it",
		}, common...)
	case trio.Analyst:
		return append([]string{
			"review the scout's latest map and list what it gets wrong",
			"compare two notes on the same topic and write which one holds up",
			"measure how many of our files were ever read again",
		}, common...)
	case trio.Builder:
		return append([]string{
			"build a small tool that lists the workspace by age",
			"turn the analyst's last review into a checklist file",
			"fix the oldest broken file in the workspace",
		}, common...)
	}
	return append([]string{"pick one file in the workspace and make it better", "build something small and useful and say where it is"}, common...)
}

// newRand returns a PCG source seeded from seed.
func newRand(seed uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed, splitmix(seed^0x9e3779b97f4a7c15)))
}

// splitmix is the SplitMix64 finaliser, used to derive seeds.
func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// derive returns the seed of stream k of seed.
func derive(seed uint64, k uint64) uint64 { return splitmix(splitmix(seed) ^ splitmix(k+1)) }
