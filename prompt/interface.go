package prompt

import (
	"encoding/json"
	"time"

	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/slot"
	"github.com/existence-loop/sdk/suffering"
)

// Section is one named part of the existence prompt (spec §2). Sections are
// separated by one blank line; a section whose Render returns "" is absent
// and leaves no blank line behind (a conditional section).
//
// Render must be pure: the same View gives the same text. It must not keep v
// or modify it. Text carries no leading or trailing newline.
type Section interface {
	Name() string
	Render(v *View) string
}

// Trimmer is implemented by sections that can shrink to fit a [Budget].
// TrimPriority orders the trimming: sections with a lower priority shrink
// first; 0 means the section never shrinks. Trim returns the section's text
// cut to at most maxChars characters (a best effort: it may return more only
// when even its header does not fit, in which case the assembler drops
// the section to its header and a marker). A trimmed text must show where
// it was cut with [CutMarker].
type Trimmer interface {
	Section
	TrimPriority() int
	Trim(v *View, maxChars int) string
}

// View is the read-only state a [Section] renders from: one agent at one
// instant. The existence package builds it every cycle; tests build it with
// prompt/prompttest.
type View struct {
	// Now is the instant of assembly; uptime and "ago" durations are
	// computed from it.
	Now time.Time
	// Started is when the agent's loop started in this process: the
	// TIME section's "Running for" is Now − Started (spec §2 row 12, as
	// the original's daemon uptime). Zero: "unknown". It is not
	// the identity's age (identity.Identity.CreatedAt).
	Started time.Time
	// LastPresence is when a person was last present: the latest arrival
	// of a host message or of an assigned task. When it (or the delivery
	// time of a message in Host) is less than [PresenceWindow] (12 h)
	// before Now, the situation section ends with [PresenceLine]
	// (spec §2 row 4, "Presence"; under [LayoutCache] the time section
	// does). Zero: unknown, no line.
	LastPresence time.Time
	// Identity is the agent's identity (never nil when assembled by the
	// existence package).
	Identity *identity.Identity
	// Suffering is the agent's suffering state (may be nil: no suffering).
	Suffering *suffering.State
	// Peers are the other agents, in a stable order (by id), or the ones
	// chosen to be shown when there are too many (spec §8; see
	// runner.Runner).
	Peers []Peer
	// PeersOmitted is how many other agents exist beyond Peers; when
	// positive, the peers section ends with "(and N others)".
	PeersOmitted int
	// Inbox holds unread peer messages, oldest first.
	Inbox []identity.AgentMessage
	// Host holds unread host messages, oldest first. The host message
	// section (spec §2 row 16) shows every one that is not blank, one per
	// line, each cut to Limits.HostMessage characters; at most the newest
	// Limits.PeerMessagesShown (5).
	Host []identity.AgentMessage
	// Task is the task assigned to the agent, if any (spec §2 row 1).
	Task *Task
	// Limits are the caps on what is shown; zero fields mean defaults.
	Limits identity.Limits
	// Values carries application data for custom sections; see [Key].
	Values *Values
	// Memories are long-term memories recalled for this prompt, best
	// first: the memories section ([Memories], [SectionMemories]) shows
	// them. The existence loop fills it when the agent has a memory
	// (existence.Config.Memory.LongTerm) and the assembler has that section; nil
	// otherwise.
	Memories []Memory
	// Slots are the slots the agent sees: its own board and the shared
	// board's (slot.Slot, GLaDOS), in any order. The slots section
	// ([SlotsSection], placed by the application) lists them most
	// important first; no default section shows them.
	Slots []slot.Slot
	// WorkingMemory is the agent's working memory (compact JSON, nil when
	// empty), WorkingMemoryMax its cap in bytes (0: the agent has no
	// working memory, and the working memory section is absent) and
	// WorkingMemoryNote why its last one was refused ("" when it was
	// not): see [WorkingMemorySection].
	WorkingMemory     json.RawMessage
	WorkingMemoryMax  int
	WorkingMemoryNote string
	// Commissioning is the instructions of the agent's commissioning
	// (its BOOTSTRAP.md), "" when it is not being commissioned: see
	// [CommissioningSection].
	Commissioning string
	// Window is the model's context window for this prompt, as a
	// [Budget]: MaxTokens is the window minus the reply's reserve, Count
	// the model's calibrated token estimator. It applies on top of the
	// assembler's own [Config].Budget (the smaller limit wins; the
	// assembler's Count, when set, counts both). The existence loop sets
	// it on every cycle from the model's window (llm.ContextWindowOf), so
	// that a prompt is cut visibly here rather than silently by the
	// server. [Assembler.AssembleBuiltin] runs Window.Count under the
	// caller's lock: give it a counter that takes no lock of yours, such
	// as llm.TokenEstimator.Tokens. Zero means no window.
	Window Budget
}

// Peer is what an agent knows about another agent: its name and the start
// of its narrative (spec §2 row 10), nothing else.
type Peer struct {
	// ID is the peer's agent id, e.g. "analyst"; the section shows it
	// when Name is blank.
	ID string
	// Name is the peer's display name, e.g. "Cipher".
	Name string
	// Narrative is the peer's narrative (its rolling self-history) in
	// full; the section shows its first Limits.PeerNarrative (150)
	// characters on one line, or "(no history yet)" when it is blank.
	Narrative string
}

// Task is an externally assigned task (spec §2 row 1).
type Task struct {
	// ID identifies the task in its queue, e.g. "task-000042"; it is not
	// shown in the prompt.
	ID string
	// Description is what to do, shown on one line as
	// "ASSIGNED TASK: {description}". A blank description leaves the
	// section out.
	Description string
	// Arrived is when the task was submitted: a person's presence
	// (see [View].LastPresence and [Present]; spec §2 "Presence"). Zero:
	// unknown.
	Arrived time.Time
}
