package identity

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/existence-loop/sdk/internal/agentid"
	"github.com/existence-loop/sdk/internal/runes"
)

// Identity is an agent's persistent self (spec §5). Every list is ordered
// oldest first. Caps come from [Limits] and are enforced by the mutating
// methods and by [Identity.Enforce] on load.
type Identity struct {
	// AgentID is the stable id, e.g. "scout"; see [ValidateID].
	AgentID string `json:"agent_id"`
	// Name is the display name, e.g. "Cedar".
	Name string `json:"name"`
	// Traits are the agent's character traits, e.g. "curious", set when
	// the identity is created (spec §5). The default prompt does not show
	// them.
	Traits []string `json:"traits,omitempty"`
	// Domains are the areas the agent works in, e.g. "writing", set when
	// the identity is created. They feed the anticipatory signal
	// (spec §4).
	Domains []string `json:"domains,omitempty"`
	// Worldview is at most Limits.Worldview characters; it is overwritten,
	// never appended.
	Worldview string `json:"worldview,omitempty"`
	// Opinions are the opinions formed, oldest first, at most
	// Limits.Opinions (20; the oldest fall off, spec §3).
	Opinions []Opinion `json:"opinions,omitempty"`
	// Questions are the open questions, oldest first, at most
	// Limits.Questions (12), each at most Limits.QuestionChars (200)
	// characters, no two equal after trimming and case-folding.
	Questions []string `json:"open_questions,omitempty"`
	// Narrative is the rolling self-history; the last Limits.NarrativeKept
	// characters are kept.
	Narrative string `json:"narrative,omitempty"`
	// Discoveries are what the agent found outside itself and
	// documented, oldest first, at most Limits.Discoveries (20); at most
	// one per non-empty Source (see [Identity.AddDiscovery]).
	Discoveries []Discovery `json:"discoveries,omitempty"`
	// Goals is the goal history; only the last one may be [Active].
	Goals []Goal `json:"goals,omitempty"`
	// CreatedAt is when the identity was created. Zero when unknown. (The
	// prompt's "Running for" is the loop's uptime in this process, not
	// the identity's age: prompt.View.Started, spec §2 row 12.)
	CreatedAt time.Time `json:"created_at,omitzero"`
}

// Opinion is one opinion the agent formed.
type Opinion struct {
	// Text is the opinion, at most Limits.OpinionChars (200) characters.
	Text string `json:"opinion"`
	// Domain is what the opinion is about, e.g. "architecture", at most
	// Limits.DomainChars (60) characters; the prompt shows it as
	// "[{domain}] {opinion}" (spec §2 row 7).
	Domain string `json:"domain"`
	// Formed is when the opinion was formed (the original kept the date).
	Formed time.Time `json:"formed,omitzero"`
}

// Discovery is something the agent found outside itself and documented.
type Discovery struct {
	// Text says what was found, at most Limits.DiscoveryChars characters,
	// e.g. `design/index.md: "# Index of designs"`.
	Text string `json:"text"`
	// Source is where it was found, e.g. a workspace path.
	Source string `json:"source,omitempty"`
	// At is when it was found. The existence loop stamps a zero At with
	// the time it records the discovery.
	At time.Time `json:"at,omitzero"`
}

// GoalStatus is the state of a goal. Ended goals are shown in the prompt as
// "[DONE]", "[FAILED]" or "[ABANDONED]" (spec §2 row 14).
type GoalStatus string

// Goal statuses.
const (
	Active    GoalStatus = "active"
	Done      GoalStatus = "DONE"
	Failed    GoalStatus = "FAILED"
	Abandoned GoalStatus = "ABANDONED"
)

// Ended reports whether s is a final status.
func (s GoalStatus) Ended() bool { return s == Done || s == Failed || s == Abandoned }

// Goal is one entry of the goal history.
type Goal struct {
	// ID identifies the goal within the agent's history. The existence
	// loop assigns unique, time-sortable ids of the form
	// "goal-20060102T150405-1a2b3c4d" (UTC start time and random hex).
	ID string `json:"id"`
	// Objective is the goal's text, at most Limits.EntryChars characters.
	// (The model's reasoning for it is logged as an event, never stored:
	// spec §3.)
	Objective string `json:"objective"`
	// Status is [Active] while the goal is pursued, then DONE, FAILED or
	// ABANDONED.
	Status GoalStatus `json:"status"`
	// Started is when the goal was chosen and started.
	Started time.Time `json:"started"`
	// Ended is when the goal ended; zero while it is active.
	Ended time.Time `json:"ended,omitzero"`
	// Outcome is the summary of what the goal produced, at most
	// Limits.Outcome characters.
	Outcome string `json:"outcome,omitempty"`
	// TaskID is set when the goal pursues an assigned task.
	TaskID string `json:"task_id,omitempty"`
	// Fallback is true when the goal is the spec §6 fallback goal.
	Fallback bool `json:"fallback,omitempty"`
	// Cause is why the fallback was used (fallback goals only).
	Cause string `json:"cause,omitempty"`
	// BrokenTools lists tools that failed at least 3 times while pursuing
	// the goal; the next prompts list them.
	BrokenTools []string `json:"broken_tools,omitempty"`
	// Artifacts lists what the goal produced (such as workspace paths), at
	// most MaxGoalArtifacts; the suffering assessment uses them.
	Artifacts []string `json:"artifacts,omitempty"`
}

// MaxGoalArtifacts is the number of artifacts kept per goal.
const MaxGoalArtifacts = 20

// Errors of identity operations.
var (
	// ErrInvalidID: an agent id is empty or not of the form [ValidateID]
	// accepts.
	ErrInvalidID = agentid.ErrInvalid
	// ErrNoActiveGoal: EndGoal was called with no active goal.
	ErrNoActiveGoal = errors.New("identity: no active goal")
	// ErrGoalActive: StartGoal was called while a goal is active.
	ErrGoalActive = errors.New("identity: a goal is already active")
)

// ValidateID reports whether id can name an agent: 1–64 characters of
// lower-case ASCII letters, digits, "_" and "-", starting with a letter or
// digit. Ids become file names, so anything else (separators, "..", NUL) is
// refused with [ErrInvalidID].
func ValidateID(id string) error { return agentid.Validate(id) }

// New returns a fresh identity created at now.
func New(agentID, name string, now time.Time) Identity {
	return Identity{AgentID: agentID, Name: name, CreatedAt: now}
}

// SetWorldview overwrites the worldview with text cut to l.Worldview
// characters (spec §3). Blank text changes nothing; the result reports
// whether the worldview changed.
func (id *Identity) SetWorldview(text string, l Limits) bool {
	text = strings.TrimSpace(text)
	if text == "" {
		return false
	}
	text = runes.Head(text, l.withDefaults().Worldview)
	if text == id.Worldview {
		return false
	}
	id.Worldview = text
	return true
}

// AddOpinion appends o, its text cut to l.OpinionChars (200) and its
// domain to l.DomainChars (60) characters (blank text is ignored), and drops
// the oldest beyond l.Opinions. It reports whether o was added. The caps
// are the original's (spec §3, §5).
func (id *Identity) AddOpinion(o Opinion, l Limits) bool {
	l = l.withDefaults()
	o.Text = runes.Head(strings.TrimSpace(o.Text), l.OpinionChars)
	o.Domain = runes.Head(strings.TrimSpace(o.Domain), l.DomainChars)
	if o.Text == "" {
		return false
	}
	id.Opinions = appendLast(id.Opinions, o, l.Opinions)
	return true
}

// AddQuestion appends q, cut to l.QuestionChars (200) characters, and drops
// the oldest beyond l.Questions. A blank q, or one already held (see
// [Identity.HasQuestion]), is not added. It reports whether q was added.
func (id *Identity) AddQuestion(q string, l Limits) bool {
	l = l.withDefaults()
	q = runes.Head(strings.TrimSpace(q), l.QuestionChars)
	if q == "" || id.HasQuestion(q) {
		return false
	}
	id.Questions = appendLast(id.Questions, q, l.Questions)
	return true
}

// HasQuestion reports whether q is already among the open questions, after
// trimming surrounding whitespace and case-folding both (spec §3: a
// question already held is not added again).
func (id *Identity) HasQuestion(q string) bool {
	q = strings.TrimSpace(q)
	for _, have := range id.Questions {
		if strings.EqualFold(strings.TrimSpace(have), q) {
			return true
		}
	}
	return false
}

// AddDiscovery appends d (blank text is ignored), cuts its text to
// l.DiscoveryChars and drops the oldest beyond l.Discoveries. A discovery
// with the same non-empty Source as an earlier one replaces it (the newer
// finding wins and moves to the end).
func (id *Identity) AddDiscovery(d Discovery, l Limits) bool {
	l = l.withDefaults()
	d.Text = runes.Head(strings.TrimSpace(d.Text), l.DiscoveryChars)
	if d.Text == "" {
		return false
	}
	if d.Source != "" {
		id.Discoveries = slices.DeleteFunc(id.Discoveries, func(x Discovery) bool { return x.Source == d.Source })
	}
	id.Discoveries = appendLast(id.Discoveries, d, l.Discoveries)
	return true
}

// AppendNarrative appends entry to the narrative (separated by a space) and
// keeps the last l.NarrativeKept characters.
func (id *Identity) AppendNarrative(entry string, l Limits) {
	entry = strings.TrimSpace(entry)
	if entry == "" {
		return
	}
	if id.Narrative != "" {
		entry = id.Narrative + " " + entry
	}
	id.Narrative = runes.Tail(entry, l.withDefaults().NarrativeKept)
}

// ActiveGoal returns the active goal, or nil.
func (id *Identity) ActiveGoal() *Goal {
	if n := len(id.Goals); n > 0 && id.Goals[n-1].Status == Active {
		return &id.Goals[n-1]
	}
	return nil
}

// LastEnded returns the most recently ended goal, or nil.
func (id *Identity) LastEnded() *Goal {
	for i := len(id.Goals) - 1; i >= 0; i-- {
		if id.Goals[i].Status.Ended() {
			return &id.Goals[i]
		}
	}
	return nil
}

// StartGoal appends g as the active goal (its Status is set to [Active],
// its objective cut to l.EntryChars characters) and drops the oldest
// history beyond l.Goals. It returns [ErrGoalActive] when a goal is already
// active.
func (id *Identity) StartGoal(g Goal, l Limits) error {
	if id.ActiveGoal() != nil {
		return ErrGoalActive
	}
	l = l.withDefaults()
	g.Status = Active
	g.Ended = time.Time{}
	g.Objective = runes.Head(strings.TrimSpace(g.Objective), l.EntryChars)
	id.Goals = appendLast(id.Goals, g, l.Goals)
	return nil
}

// EndGoal ends the active goal with status (DONE, FAILED or ABANDONED) at
// now, stores outcome cut to l.Outcome characters, and appends a narrative
// entry "[YYYY-MM-DD] {Completed|Failed|Abandoned}: {objective, first 80
// characters, whitespace collapsed}.". It returns the
// ended goal, [ErrNoActiveGoal], or an error for a status that is not final.
func (id *Identity) EndGoal(status GoalStatus, outcome string, now time.Time, l Limits) (Goal, error) {
	if !status.Ended() {
		return Goal{}, fmt.Errorf("identity: %q is not a final goal status", status)
	}
	g := id.ActiveGoal()
	if g == nil {
		return Goal{}, ErrNoActiveGoal
	}
	l = l.withDefaults()
	g.Status, g.Ended = status, now
	g.Outcome = runes.Head(strings.TrimSpace(outcome), l.Outcome)
	word := map[GoalStatus]string{Done: "Completed", Failed: "Failed", Abandoned: "Abandoned"}[status]
	obj := strings.Join(strings.Fields(g.Objective), " ")
	id.AppendNarrative(fmt.Sprintf("[%s] %s: %s.", now.UTC().Format(time.DateOnly), word, runes.Head(obj, 80)), l)
	return *g, nil
}

// Enforce applies every cap of l to id and returns a description of each cut
// it made (nil when id was within its caps). It is called on load, so that
// over-cap state written by older versions or other tools is trimmed, never
// refused ("trimmed, never refused"). Lists keep their newest entries;
// the worldview keeps its head and the narrative its tail.
//
// A list at its cap without spare capacity (as a store loads it, give or
// take a size class) also gets the room its next additions would allocate (a quarter of the cap; it is
// not a cut and not reported), so that an agent loaded at its caps takes
// the memory before its first cycle that it takes after it: memory stays
// flat while a population runs.
func (id *Identity) Enforce(l Limits) []string {
	l = l.withDefaults()
	defer func() {
		id.Opinions = reserve(id.Opinions, l.Opinions)
		id.Questions = reserve(id.Questions, l.Questions)
		id.Discoveries = reserve(id.Discoveries, l.Discoveries)
		id.Goals = reserve(id.Goals, l.Goals)
	}()
	var cuts []string
	note := func(field string, from, to int) {
		cuts = append(cuts, fmt.Sprintf("%s: %d → %d", field, from, to))
	}
	if n := runes.Count(id.Worldview); n > l.Worldview {
		id.Worldview = runes.Head(id.Worldview, l.Worldview)
		note("worldview characters", n, l.Worldview)
	}
	if n := runes.Count(id.Narrative); n > l.NarrativeKept {
		id.Narrative = runes.Tail(id.Narrative, l.NarrativeKept)
		note("narrative characters", n, l.NarrativeKept)
	}
	if n := len(id.Opinions); n > l.Opinions {
		id.Opinions = keepLast(id.Opinions, l.Opinions)
		note("opinions", n, l.Opinions)
	}
	if n := len(id.Questions); n > l.Questions {
		id.Questions = keepLast(id.Questions, l.Questions)
		note("open questions", n, l.Questions)
	}
	if n := len(id.Discoveries); n > l.Discoveries {
		id.Discoveries = keepLast(id.Discoveries, l.Discoveries)
		note("discoveries", n, l.Discoveries)
	}
	cut := 0
	for i := range id.Discoveries {
		if d := &id.Discoveries[i]; runes.Count(d.Text) > l.DiscoveryChars {
			d.Text = runes.Head(d.Text, l.DiscoveryChars)
			cut++
		}
	}
	if cut > 0 {
		cuts = append(cuts, fmt.Sprintf("discovery texts cut to %d characters: %d", l.DiscoveryChars, cut))
	}
	if n := len(id.Goals); n > l.Goals {
		id.Goals = keepLast(id.Goals, l.Goals)
		note("goals", n, l.Goals)
	}
	// Only the last goal may be active: an older "active" goal was
	// interrupted (for example by a crash) and is recorded as abandoned.
	stale := 0
	for i := 0; i < len(id.Goals)-1; i++ {
		if g := &id.Goals[i]; g.Status == Active {
			g.Status = Abandoned
			if g.Outcome == "" {
				g.Outcome = "interrupted before it ended"
			}
			stale++
		}
	}
	if stale > 0 {
		note("stale active goals", stale, 0)
	}
	cut = 0
	for i := range id.Goals {
		if g := &id.Goals[i]; runes.Count(g.Outcome) > l.Outcome {
			g.Outcome = runes.Head(g.Outcome, l.Outcome)
			cut++
		}
	}
	if cut > 0 {
		cuts = append(cuts, fmt.Sprintf("goal outcomes cut to %d characters: %d", l.Outcome, cut))
	}
	cut = 0
	cutEntry := func(s *string, max int) {
		if runes.Count(*s) > max {
			*s = runes.Head(*s, max)
			cut++
		}
	}
	for i := range id.Opinions {
		cutEntry(&id.Opinions[i].Text, l.OpinionChars)
		cutEntry(&id.Opinions[i].Domain, l.DomainChars)
	}
	for i := range id.Questions {
		cutEntry(&id.Questions[i], l.QuestionChars)
	}
	for i := range id.Goals {
		g := &id.Goals[i]
		cutEntry(&g.Objective, l.EntryChars)
		if len(g.Artifacts) > MaxGoalArtifacts {
			g.Artifacts = keepLast(g.Artifacts, MaxGoalArtifacts)
			cut++
		}
	}
	if cut > 0 {
		cuts = append(cuts, fmt.Sprintf("over-long entries cut (questions and opinions %d characters, domains %d, objectives %d, %d artifacts per goal): %d", l.QuestionChars, l.DomainChars, l.EntryChars, MaxGoalArtifacts, cut))
	}
	return cuts
}

// Clone returns a deep copy of id.
func (id *Identity) Clone() Identity {
	c := *id
	c.Traits = slices.Clone(id.Traits)
	c.Domains = slices.Clone(id.Domains)
	c.Opinions = slices.Clone(id.Opinions)
	c.Questions = slices.Clone(id.Questions)
	c.Discoveries = slices.Clone(id.Discoveries)
	c.Goals = slices.Clone(id.Goals)
	for i := range c.Goals {
		c.Goals[i].BrokenTools = slices.Clone(id.Goals[i].BrokenTools)
		c.Goals[i].Artifacts = slices.Clone(id.Goals[i].Artifacts)
	}
	return c
}

// appendLast appends v to s and keeps the last n elements, like
// keepLast(append(s, v), n) but with one allocation every n/4+1 appends
// at the cap instead of two for each (append growing the array, then the
// copy): the window slides forward through spare capacity (n/4 elements,
// at least 1), and only when that is used up are the last n copied to a
// new array of that capacity. As with append, no element within an older
// header's length is written; but results share one array, so two
// shallow copies of an Identity must not both append (Clone copies the
// lists).
func appendLast[T any](s []T, v T, n int) []T {
	switch {
	case n <= 0 || len(s) > n:
		return keepLast(append(s, v), n)
	case len(s) < n || cap(s) > len(s):
		s = append(s, v)
		return s[len(s)-min(n, len(s)):]
	}
	out := make([]T, n, n+max(1, n/4))
	copy(out, s[1:])
	out[n-1] = v
	return out
}

// reserve returns s, or a copy of it with the spare capacity appendLast
// allocates (n/4 elements, at least 1), when s is at its cap n with less
// room than that (a copy's array is rounded up to a size class, so it may
// have a little).
func reserve[T any](s []T, n int) []T {
	room := max(1, n/4)
	if n <= 0 || len(s) != n || cap(s) >= n+room {
		return s
	}
	out := make([]T, n, n+room) // not slices.Grow, which would double a short list
	copy(out, s)
	return out
}

// keepLast returns the last n elements of s (n ≤ 0 keeps none).
func keepLast[T any](s []T, n int) []T {
	if n < 0 {
		n = 0
	}
	if len(s) <= n {
		return s
	}
	return slices.Clone(s[len(s)-n:])
}
