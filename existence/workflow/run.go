package workflow

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strings"
	"text/template"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v5"

	"github.com/existence-loop/sdk/existence"
	"github.com/existence-loop/sdk/existence/event"
	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/llm"
	"github.com/existence-loop/sdk/prompt"
)

// recentGoals is how many ended goals the metrics look at, as the
// suffering assessment (spec §4).
const recentGoals = 10

// maxOutputChars caps a step's output in its event.
const maxOutputChars = 500

// strategy is a validated, compiled workflow: an existence.CycleStrategy.
type strategy struct {
	w       Workflow
	tmpls   []*template.Template
	schemas []*jsonschema.Schema
}

// New validates w ([Workflow.Validate]) and returns it as the strategy of
// an agent's cycles (existence.Config.Calls.Cycle). Errors match [ErrInvalid].
func New(w Workflow) (existence.CycleStrategy, error) {
	if err := w.Validate(); err != nil {
		return nil, err
	}
	if w.OnStepFailure == "" {
		w.OnStepFailure = Abort
	}
	s := &strategy{w: w, tmpls: make([]*template.Template, len(w.Steps)), schemas: make([]*jsonschema.Schema, len(w.Steps))}
	for i, st := range w.Steps {
		if st.Type != LLM {
			continue
		}
		s.tmpls[i], _ = parseTemplate(st) // validated
		if len(st.Schema) > 0 {
			s.schemas[i], _ = compileSchema(st.Schema)
		}
	}
	return s, nil
}

// Reply runs the steps in order and returns the last one's output as the
// cycle's reply, parsed and validated as every existence reply
// ([prompt.ParseResponse]). Each step is reported as an
// event.Step (done, skipped or failed) and traced as a span. A
// failed step ends the workflow with its error under [Abort], and is
// recorded as {"error": "…"} under [Continue]; a failing or skipped last
// step is always an error (there is no reply). The working memory the
// code steps set ([Data].Memory) is merged, key by key, over the reply's
// own working_memory (or the stored one when the reply has none).
func (s *strategy) Reply(ctx context.Context, req *existence.CycleRequest) (*prompt.Response, error) {
	d := newData(req)
	n := len(s.w.Steps)
	report := func(i int, status, out, why string) {
		st := s.w.Steps[i]
		req.Report(event.Event{Kind: event.Step, Text: st.Name, Step: &event.StepInfo{
			Index: i + 1, Of: n, Name: st.Name, Type: string(st.Type), Status: status, Output: cut(out), Why: why,
		}})
	}
	var last any
	for i, st := range s.w.Steps {
		if why, ok := d.holds(st.When); !ok {
			report(i, "skipped", "", why)
			if i == n-1 {
				return nil, fmt.Errorf("workflow: the last step, %s, did not run (%s): no reply", st.Name, why)
			}
			continue
		}
		sctx, end := req.Span(ctx, st.Name)
		out, err := s.step(sctx, i, req, d)
		end(err)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			report(i, "failed", "", err.Error())
			if s.w.OnStepFailure == Abort || i == n-1 {
				return nil, fmt.Errorf("workflow: step %s: %w", st.Name, err)
			}
			d.Steps[st.Name] = map[string]any{"error": err.Error()}
			d.order = append(d.order, st.Name)
			continue
		}
		d.Steps[st.Name] = out
		d.order = append(d.order, st.Name)
		report(i, "done", show(out), "")
		last = out
	}
	r, ok := last.(*prompt.Response)
	if !ok {
		text, err := asText(last)
		if err != nil {
			return nil, err
		}
		if r, err = prompt.ParseResponse(text); err != nil {
			return nil, err
		}
	}
	if len(d.Memory) > 0 {
		merged := map[string]any{}
		base := r.WorkingMemory
		if len(base) == 0 {
			base = req.State.WorkingMemory
		}
		if len(base) > 0 {
			_ = json.Unmarshal(base, &merged) // not an object: replaced
			if merged == nil {
				merged = map[string]any{}
			}
		}
		maps.Copy(merged, d.Memory)
		b, err := json.Marshal(merged)
		if err != nil {
			return nil, fmt.Errorf("workflow: working memory: %w", err)
		}
		r.WorkingMemory = b
	}
	return r, nil
}

// step runs step i and returns its output.
func (s *strategy) step(ctx context.Context, i int, req *existence.CycleRequest, d *Data) (any, error) {
	st := s.w.Steps[i]
	if st.Type == Code {
		f, ok := s.w.Actions[st.Action]
		if !ok {
			f = builtins[st.Action]
		}
		return safeAction(ctx, f, d)
	}
	text, err := render(s.tmpls[i], d)
	if err != nil {
		return nil, fmt.Errorf("prompt template: %w", err)
	}
	final := i == len(s.w.Steps)-1
	lreq := &llm.Request{
		Messages:    []llm.Message{{Role: llm.RoleUser, Content: text}},
		Temperature: req.Temperature,
		Seed:        req.Seed,
		MaxTokens:   req.MaxTokens,
	}
	switch {
	case len(st.Schema) > 0:
		lreq.Format = st.Schema
	case final:
		lreq.Format = prompt.Schema()
	}
	resp, err := req.Model.Generate(ctx, lreq)
	if err != nil {
		return nil, err
	}
	if final && len(st.Schema) == 0 {
		return prompt.ParseResponse(resp.Text) // the reply, validated as today
	}
	out, isObject := decodeObject(resp.Text)
	if s.schemas[i] != nil {
		if !isObject {
			return nil, fmt.Errorf("%w: the step's output is not a JSON object", llm.ErrInvalidOutput)
		}
		if err := s.schemas[i].Validate(out); err != nil {
			return nil, fmt.Errorf("%w: the step's output does not match its schema: %v", llm.ErrInvalidOutput, err)
		}
	}
	return out, nil
}

// safeAction runs f, turning a panic into an error.
func safeAction(ctx context.Context, f Action, d *Data) (out any, err error) {
	defer func() {
		if p := recover(); p != nil {
			out, err = nil, fmt.Errorf("action panicked: %v", p)
		}
	}()
	return f(ctx, d)
}

// decodeObject returns text's JSON object (the first {…} in it, code
// fences and prose around it left out) as a map, or the trimmed text.
func decodeObject(text string) (any, bool) {
	t := strings.TrimSpace(text)
	if i, j := strings.IndexByte(t, '{'), strings.LastIndexByte(t, '}'); i >= 0 && j > i {
		var m map[string]any
		if err := json.Unmarshal([]byte(t[i:j+1]), &m); err == nil {
			return m, true
		}
	}
	return t, false
}

// asText is the last step's output as the reply's text.
func asText(v any) (string, error) {
	if s, ok := v.(string); ok {
		return s, nil
	}
	if v == nil {
		return "", errors.New("workflow: no step produced a reply")
	}
	b, err := json.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("workflow: the last step's output: %w", err)
	}
	return string(b), nil
}

// show is an output as the event shows it.
func show(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case *prompt.Response:
		return x.Content
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// cut cuts s to maxOutputChars characters.
func cut(s string) string {
	if utf8.RuneCountInString(s) <= maxOutputChars {
		return s
	}
	return string([]rune(s)[:maxOutputChars-1]) + "…"
}

// newData builds the steps' Data from the cycle's request.
func newData(req *existence.CycleRequest) *Data {
	st := req.State
	d := &Data{
		AgentID: req.AgentID, Agent: req.AgentName, Cycle: req.Cycle,
		Worldview: st.Identity.Worldview,
		Steps:     map[string]any{},
		Memory:    map[string]any{},
	}
	if req.Prompt != nil {
		d.Prompt = req.Prompt.Text
	}
	for i := len(st.Identity.Goals) - 1; i >= 0 && len(d.Recent) < recentGoals; i-- {
		g := st.Identity.Goals[i]
		if g.Status.Ended() {
			d.Recent = append(d.Recent, Goal{Objective: g.Objective, Status: string(g.Status), Outcome: g.Outcome})
		}
	}
	for i, j := 0, len(d.Recent)-1; i < j; i, j = i+1, j-1 {
		d.Recent[i], d.Recent[j] = d.Recent[j], d.Recent[i]
	}
	d.Metrics = metrics(d.Recent)
	if len(st.WorkingMemory) > 0 {
		_ = json.Unmarshal(st.WorkingMemory, &d.WorkingMemory) // stored as an object
		d.Goals.StrategicGoal, _ = d.WorkingMemory["strategic_goal"].(string)
		d.Goals.CurrentSubgoal, _ = d.WorkingMemory["current_subgoal"].(string)
		if p, ok := d.WorkingMemory["subgoal_progress"].(float64); ok {
			d.Goals.Progress = int(p)
		}
	}
	return d
}

// metrics computes the adaptive architect's metrics over recent, oldest
// first.
func metrics(recent []Goal) Metrics {
	m := Metrics{SuccessRate: -1}
	for _, g := range recent {
		if g.Status == string(identity.Done) {
			m.Completed++
		} else {
			m.Failed++
		}
	}
	if n := len(recent); n > 0 {
		m.SuccessRate = float64(m.Completed) / float64(n)
	}
	if n := len(recent); n >= 3 {
		last := recent[n-3:]
		failed, same := true, true
		for _, g := range last {
			failed = failed && g.Status != string(identity.Done)
			same = same && norm(g.Objective) == norm(last[0].Objective)
		}
		m.StuckInLoop = failed || same
	}
	m.ShouldPivot = m.StuckInLoop || (len(recent) >= 5 && m.SuccessRate < 0.3)
	return m
}

func norm(s string) string { return strings.ToLower(strings.Join(strings.Fields(s), " ")) }

// holds reports whether c holds for d, and when not, why.
func (d *Data) holds(c *Condition) (string, bool) {
	if c == nil {
		return "", true
	}
	var why []string
	if c.Every > 0 {
		if (d.Cycle-1)%c.Every == 0 {
			return "", true
		}
		why = append(why, fmt.Sprintf("runs every %d cycles; this is cycle %d", c.Every, d.Cycle))
	}
	if c.Stuck {
		if d.Metrics.StuckInLoop {
			return "", true
		}
		why = append(why, "not stuck")
	}
	if c.SuccessRateBelow > 0 {
		if d.Metrics.SuccessRate >= 0 && d.Metrics.SuccessRate < c.SuccessRateBelow {
			return "", true
		}
		why = append(why, fmt.Sprintf("success rate not under %.2f", c.SuccessRateBelow))
	}
	if len(why) == 0 {
		return "", true // an empty condition
	}
	return strings.Join(why, "; "), false
}
