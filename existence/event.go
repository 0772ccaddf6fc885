package existence

import (
	"fmt"
	"strings"
	"time"

	"github.com/existence-loop/sdk/suffering"
)

// EventKind names what happened. Kinds are stable strings, safe to match in
// logs and JSON consumers.
type EventKind string

// Event kinds.
const (
	// EventGoalChosen: an existence cycle chose a goal. Text and Goal are
	// the full goal, Reasoning what drove it (the thoughts log marks it
	// 🎯).
	EventGoalChosen EventKind = "goal_chosen"
	// EventGoalEnded: a goal ended. Status is DONE, FAILED or ABANDONED,
	// Text the outcome summary, Goal the goal.
	EventGoalEnded EventKind = "goal_ended"
	// EventWorldview: the worldview was overwritten; Text is the new one
	// (🧠).
	EventWorldview EventKind = "worldview_changed"
	// EventQuestion: an open question was added (Text).
	EventQuestion EventKind = "question_added"
	// EventOpinion: an opinion was added (Text, Domain).
	EventOpinion EventKind = "opinion_added"
	// EventStressorAdded / EventStressorResolved: a stressor changed
	// (Stressor). Cause says who: "self-report" or "assessment".
	EventStressorAdded    EventKind = "stressor_added"
	EventStressorResolved EventKind = "stressor_resolved"
	// EventStressorDropped: a reported stressor was not added (already
	// active, or 5 already active); Text says why.
	EventStressorDropped EventKind = "stressor_dropped"
	// EventFallback: the cycle used the spec §6 fallback goal; Cause names
	// the failure (Err holds it).
	EventFallback EventKind = "fallback"
	// EventCrisis: the load is at or above 0.90 for a cycle (Load); the
	// agent told its peers.
	EventCrisis EventKind = "crisis"
	// EventCrisisReset: after 3 consecutive crisis cycles every stressor
	// was force-reset (spec §4).
	EventCrisisReset EventKind = "crisis_reset"
	// EventAnticipation: the anticipatory signal (spec §4): a domain the
	// agent works in once caused suffering that peaked above 0.5 (Text).
	EventAnticipation EventKind = "anticipation"
	// EventCycle: an existence cycle finished; Cycle holds durations and
	// token counts.
	EventCycle EventKind = "cycle"
	// EventModelCall: one model attempt (Call holds model, duration, tokens
	// and outcome), including retries, repairs and fallbacks.
	EventModelCall EventKind = "model_call"
	// EventToolCall: an executor called a tool (Tool).
	EventToolCall EventKind = "tool_call"
	// EventPromptCut: the prompt budget cut a section (Text says what).
	EventPromptCut EventKind = "prompt_cut"
	// EventStateTrimmed: loaded state was over its caps and was trimmed
	// (Text lists the cuts).
	EventStateTrimmed EventKind = "state_trimmed"
	// EventTask: an assigned task changed state (Text, Status).
	EventTask EventKind = "task"
	// EventMessage: the agent received a peer message (Cause "received",
	// Peer is the sender), a host message (Cause "host"), or sent one
	// (Cause "sent", Peer is the recipient).
	EventMessage EventKind = "message"
	// EventError: something failed that the loop survives, such as a
	// failed save (Err).
	EventError EventKind = "error"
)

// Event is one observable thing that happened to an agent. Every event
// carries the agent's id and name. Fields other than Kind, Time, AgentID and
// Agent are set as the kind's documentation says.
type Event struct {
	Kind    EventKind `json:"kind"`
	Time    time.Time `json:"time"`
	AgentID string    `json:"agent_id"`
	Agent   string    `json:"agent"`
	// Text is the event's main text: a goal in full, a worldview, a
	// question, an outcome summary.
	Text string `json:"text,omitempty"`
	// Goal is the goal's full text, on goal events.
	Goal      string `json:"goal,omitempty"`
	Reasoning string `json:"reasoning,omitempty"`
	Domain    string `json:"domain,omitempty"`
	// Peer is the other side of a message: its sender or recipient.
	Peer   string `json:"peer,omitempty"`
	Status string `json:"status,omitempty"`
	Cause  string `json:"cause,omitempty"`
	// Load is the suffering load (0–1) at the time of the event.
	Load     float64             `json:"load,omitempty"`
	Stressor *suffering.Stressor `json:"stressor,omitempty"`
	Cycle    *CycleStats         `json:"cycle,omitempty"`
	Call     *ModelCall          `json:"call,omitempty"`
	Tool     *ToolCall           `json:"tool,omitempty"`
	// Err is the error behind a fallback or error event; Error is its
	// text, for JSON.
	Err   error  `json:"-"`
	Error string `json:"error,omitempty"`
}

// CycleStats describes one existence cycle. Durations are wall-clock.
type CycleStats struct {
	Assemble     time.Duration `json:"assemble_ns"`
	Generate     time.Duration `json:"generate_ns"`
	Apply        time.Duration `json:"apply_ns"`
	Total        time.Duration `json:"total_ns"`
	PromptChars  int           `json:"prompt_chars"`
	PromptTokens int           `json:"prompt_tokens"`
	OutputTokens int           `json:"output_tokens"`
	Fallback     bool          `json:"fallback"`
}

// ModelCall is one model attempt.
type ModelCall struct {
	Model        string        `json:"model"`
	Duration     time.Duration `json:"duration_ns"`
	PromptTokens int           `json:"prompt_tokens"`
	OutputTokens int           `json:"output_tokens"`
	// Outcome is "ok" or the error class from llm.Classify
	// ("unavailable", "timeout", "truncated", "http_503", ...).
	Outcome string `json:"outcome"`
}

// ToolCall is one tool invocation by an executor.
type ToolCall struct {
	Name      string        `json:"name"`
	Arguments string        `json:"arguments"`
	Result    string        `json:"result"`
	Failed    bool          `json:"failed"`
	Duration  time.Duration `json:"duration_ns"`
}

// Observer receives events. It is called synchronously from the agent's
// goroutines, possibly concurrently for different agents, so it must be
// safe for concurrent use and return quickly.
type Observer func(Event)

// Observers returns an Observer that calls each non-nil observer in order.
func Observers(obs ...Observer) Observer {
	return func(e Event) {
		for _, o := range obs {
			if o != nil {
				o(e)
			}
		}
	}
}

// icons of the thoughts log, by kind.
var icons = map[EventKind]string{
	EventGoalChosen:       "🎯",
	EventGoalEnded:        "🏁",
	EventWorldview:        "🧠",
	EventQuestion:         "❓",
	EventOpinion:          "💭",
	EventStressorAdded:    "😣",
	EventStressorResolved: "😌",
	EventStressorDropped:  "🫥",
	EventFallback:         "⚠️",
	EventCrisis:           "🔥",
	EventCrisisReset:      "🧯",
	EventAnticipation:     "🔮",
	EventCycle:            "⏱️",
	EventModelCall:        "🔌",
	EventToolCall:         "🔧",
	EventPromptCut:        "✂️",
	EventStateTrimmed:     "✂️",
	EventTask:             "📋",
	EventMessage:          "✉️",
	EventError:            "❗",
}

// String formats e as one line of the thoughts log: "15:04:05 Cedar 🎯
// text". Newlines in texts are flattened; nothing is cut.
func (e Event) String() string {
	var b strings.Builder
	b.WriteString(e.Time.Format("15:04:05"))
	b.WriteByte(' ')
	b.WriteString(e.Agent)
	b.WriteByte(' ')
	icon := icons[e.Kind]
	if icon == "" {
		icon = "•"
	}
	b.WriteString(icon)
	b.WriteByte(' ')
	b.WriteString(flat(e.describe()))
	return b.String()
}

func (e Event) describe() string {
	switch e.Kind {
	case EventGoalChosen:
		if e.Reasoning != "" {
			return e.Text + " — why: " + e.Reasoning
		}
		return e.Text
	case EventGoalEnded:
		return "[" + e.Status + "] " + e.Text
	case EventOpinion:
		return "[" + e.Domain + "] " + e.Text
	case EventStressorAdded, EventStressorResolved:
		if e.Stressor == nil {
			return e.Text
		}
		verb := "stressor " + e.Stressor.Type
		if e.Kind == EventStressorResolved {
			return fmt.Sprintf("%s resolved (%s): %s; load %.2f", verb, e.Cause, e.Text, e.Load)
		}
		return fmt.Sprintf("%s %.2f (%s): %s; load %.2f", verb, e.Stressor.Severity, e.Cause, e.Text, e.Load)
	case EventFallback:
		return fmt.Sprintf("fallback goal (%s): %s", e.Cause, e.Error)
	case EventCycle:
		if c := e.Cycle; c != nil {
			s := fmt.Sprintf("cycle in %v: prompt %d chars, %d+%d tokens", c.Total.Round(time.Millisecond), c.PromptChars, c.PromptTokens, c.OutputTokens)
			if c.Fallback {
				s += ", fallback"
			}
			return s
		}
	case EventModelCall:
		if c := e.Call; c != nil {
			s := fmt.Sprintf("%s %s in %v", c.Model, c.Outcome, c.Duration.Round(time.Millisecond))
			if c.PromptTokens+c.OutputTokens > 0 {
				s += fmt.Sprintf(", %d+%d tokens", c.PromptTokens, c.OutputTokens)
			}
			if e.Error != "" {
				s += ": " + e.Error
			}
			return s
		}
	case EventToolCall:
		if t := e.Tool; t != nil {
			status := "ok"
			if t.Failed {
				status = "failed"
			}
			return fmt.Sprintf("%s(%s) %s: %s", t.Name, t.Arguments, status, t.Result)
		}
	case EventMessage:
		switch e.Cause {
		case "sent":
			return "to " + e.Peer + ": " + e.Text
		case "received":
			return "from " + e.Peer + ": " + e.Text
		case "host":
			return "a person said: " + e.Text
		}
	}
	if e.Error != "" {
		if e.Text == "" {
			return e.Error
		}
		return e.Text + ": " + e.Error
	}
	if e.Status != "" {
		return "[" + e.Status + "] " + e.Text
	}
	return e.Text
}

// flat replaces runs of whitespace containing newlines with one space.
func flat(s string) string {
	if !strings.ContainsAny(s, "\r\n") {
		return s
	}
	return strings.Join(strings.Fields(s), " ")
}
