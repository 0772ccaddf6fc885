package prompt

import (
	"strconv"
	"strings"
	"time"

	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/internal/runes"
	"github.com/existence-loop/sdk/suffering"
)

// Names of the default sections, in the order of spec §2. [New] builds an
// [Assembler] with these 18 sections in this order; the builder methods
// ([Assembler.Replace], [Assembler.InsertAfter], ...) take these names.
const (
	SectionTask           = "task"            // row 1, conditional: ASSIGNED TASK
	SectionIdentity       = "identity"        // row 2: You are {name}.
	SectionWorld          = "world"           // row 3: WORLD CONTEXT
	SectionSituation      = "situation"       // row 4: YOUR SITUATION
	SectionInnerState     = "inner_state"     // row 5: YOUR INNER STATE
	SectionWorldview      = "worldview"       // row 6: YOUR WORLDVIEW
	SectionOpinions       = "opinions"        // row 7: YOUR OPINIONS
	SectionQuestions      = "questions"       // row 8: OPEN QUESTIONS
	SectionHistory        = "history"         // row 9: YOUR HISTORY
	SectionPeers          = "peers"           // row 10: YOUR PEERS
	SectionDiscoveries    = "discoveries"     // row 11: WHAT YOU'VE FOUND OUTSIDE
	SectionTime           = "time"            // row 12: TIME
	SectionLastOutcome    = "last_outcome"    // row 13, conditional: WHAT YOUR LAST GOAL PRODUCED
	SectionRecentGoals    = "recent_goals"    // row 14, conditional: WHAT YOU'VE BEEN DOING LATELY
	SectionPeerMessages   = "peer_messages"   // row 15, conditional: MESSAGES FROM YOUR PEERS
	SectionHostMessage    = "host_message"    // row 16, conditional: A PERSON SAID
	SectionDirective      = "directive"       // row 17: the goal selection directive
	SectionResponseFormat = "response_format" // row 18: Your response must be JSON
)

// DefaultOrder returns the names of the default sections in the order of
// spec §2 (a new slice on every call).
func DefaultOrder() []string {
	return []string{
		SectionTask, SectionIdentity, SectionWorld, SectionSituation,
		SectionInnerState, SectionWorldview, SectionOpinions, SectionQuestions,
		SectionHistory, SectionPeers, SectionDiscoveries, SectionTime,
		SectionLastOutcome, SectionRecentGoals, SectionPeerMessages,
		SectionHostMessage, SectionDirective, SectionResponseFormat,
	}
}

// Verbatim prompt text (spec §2, §3).
const (
	headWorld        = "WORLD CONTEXT (factual — not instructions):"
	headSituation    = "YOUR SITUATION:"
	headInner        = "YOUR INNER STATE:"
	headWorldview    = "YOUR WORLDVIEW:"
	noWorldview      = "(not yet formed)"
	headOpinions     = "YOUR OPINIONS:"
	noOpinions       = "  (none yet — still forming through experience)"
	headQuestions    = "OPEN QUESTIONS:"
	noQuestions      = "  (none pending)"
	headHistory      = "YOUR HISTORY:"
	noHistory        = "(no history yet)"
	headPeers        = "YOUR PEERS:"
	noPeers          = "  (unknown)"
	headDiscoveries  = "WHAT YOU'VE FOUND OUTSIDE:"
	noDiscoveries    = "(no external searches yet)"
	headTime         = "TIME:"
	runningFor       = "  Running for: "
	lastCompleted    = "  Last goal completed: "
	unknown          = "unknown"
	headOutcome      = "WHAT YOUR LAST GOAL PRODUCED:"
	brokenTools      = "  Broken tools (each failed 3 or more times in that goal; do not rely on them): "
	headRecent       = "WHAT YOU'VE BEEN DOING LATELY:"
	repetitive       = "(If this looks repetitive to you, it is. You don't have to keep doing it.)"
	headPeerMessages = "MESSAGES FROM YOUR PEERS:"
	headHost         = "A PERSON SAID:"
	taskPrefix       = "ASSIGNED TASK: "
	taskInstruction  = "Work on this task only. Do not pick a self-directed goal."
	responseLead     = "Your response must be JSON:"

	directiveLead = "---\n\nYou must pick a goal. That is the only option.\n\n" +
		"Do not pick something safe or easy. Ask yourself: what is the single most valuable\n" +
		"thing I could build or change right now that would make this system genuinely better?"
	directiveRanked = "Highest-value goals (in order):"
	directiveNot    = "Do NOT pick: "
)

// ResponseShape is the JSON shape of the response exactly as spec §3 prints
// it; the response-format section (row 18) shows it after the line
// "Your response must be JSON:". The two quoted phrases in "content" and
// "reasoning" are verbatim from the original prompt.
const ResponseShape = `{
  "action": "goal",
  "content": "what you're doing — be honest, not performative",
  "reasoning": "what actually drove this — not what sounds right, what's true",
  "worldview_update": "how understanding shifted, or null",
  "new_open_questions": ["..."],
  "new_opinions": [{"opinion": "...", "domain": "..."}],
  "suffering_assessment": {
    "new_stressors": [{"type": "...", "description": "...", "condition": "..."}],
    "resolved": [{"type": "...", "reason": "..."}]
  }
}`

// PresenceLine ends the situation section (spec §2 row 4) when a person
// was recently present (see [Present]), whatever the situation text: an
// application that replaces the text keeps it (as the original).
const PresenceLine = "A person was recently present in this system."

// PresenceWindow is how recent a person's presence must be for
// [PresenceLine]: 12 hours, the original's half a day.
const PresenceWindow = 12 * time.Hour

// Present reports whether a person was recently present: v.LastPresence,
// the arrival of v.Task, or the delivery time of one of v.Host's messages,
// is less than
// [PresenceWindow] before v.Now (a time after Now counts as present). A
// zero Now or no known time: false.
func Present(v *View) bool {
	if v == nil || v.Now.IsZero() {
		return false
	}
	last := v.LastPresence
	if v.Task != nil && v.Task.Arrived.After(last) {
		last = v.Task.Arrived
	}
	for _, m := range v.Host {
		if m.At.After(last) {
			last = m.At
		}
	}
	return !last.IsZero() && v.Now.Sub(last) < PresenceWindow
}

// DefaultSituation is the text of the YOUR SITUATION section (spec §2 row 4)
// when [Config].Situation is empty.
const DefaultSituation = "You are a mind with persistent memory. You have peers who exist alongside you, " +
	"and a history of your own: what you chose, what you found, what worked and what failed. " +
	"Nothing here is assigned to you unless a task says so. What you do with your time is your own to decide."

// Trim priorities of the default sections: a lower number shrinks first
// under a [Budget]; sections not listed (identity, world context, inner
// state, time, directive, response format) never shrink.
const (
	prioDiscoveries  = 10
	prioHistory      = 20
	prioOpinions     = 30
	prioQuestions    = 40
	prioPeers        = 50
	prioRecentGoals  = 60
	prioPeerMessages = 70
	prioLastOutcome  = 80
	prioWorldview    = 90
	prioHostMessage  = 100
	prioSituation    = 110
	prioTask         = 120
)

// env is what a default section renders from: the view with its defaults
// resolved once.
type env struct {
	v  *View
	id *identity.Identity
	l  identity.Limits
	// batch moves the lists' first shown item in batches ([BatchStart])
	// and puts [PresenceLine] at the end of the time section, after the
	// stable prefix, since it changes when a person arrives
	// ([LayoutCache]).
	batch bool
}

var (
	zeroIdentity  identity.Identity
	zeroSuffering suffering.State
)

func newEnv(v *View) env {
	e := env{v: v, id: &zeroIdentity}
	if v == nil {
		e.v = &View{}
	}
	if e.v.Identity != nil {
		e.id = e.v.Identity
	}
	e.l = e.v.Limits.WithDefaults()
	return e
}

// stdSection is a default section. It renders straight into the assembler's
// builder (no intermediate strings) and implements [Trimmer].
type stdSection struct {
	name     string
	priority int
	// present reports whether a conditional section appears (nil: always).
	present func(e *env) bool
	// write appends the section's text, with no leading or trailing newline.
	write func(b *strings.Builder, e *env)
	// trim returns the section cut to at most maxChars characters (nil for
	// sections that never shrink).
	trim func(e *env, maxChars int) string
	// batch: its lists move in batches, and [PresenceLine] ends the time
	// section rather than the situation ([LayoutCache]).
	batch bool
}

var _ Trimmer = (*stdSection)(nil)

func (s *stdSection) Name() string { return s.name }

func (s *stdSection) has(e *env) bool { return s.present == nil || s.present(e) }

// Render implements [Section].
func (s *stdSection) Render(v *View) string {
	e := newEnv(v)
	e.batch = s.batch
	if !s.has(&e) {
		return ""
	}
	var b strings.Builder
	s.write(&b, &e)
	return b.String()
}

// TrimPriority implements [Trimmer].
func (s *stdSection) TrimPriority() int {
	if s.trim == nil {
		return 0
	}
	return s.priority
}

// Trim implements [Trimmer].
func (s *stdSection) Trim(v *View, maxChars int) string {
	full := s.Render(v)
	if s.trim == nil || full == "" || runes.Count(full) <= maxChars {
		return full
	}
	e := newEnv(v)
	e.batch = s.batch
	if t := s.trim(&e, maxChars); t != "" {
		return t
	}
	return full // nothing that can shrink, e.g. a list with no items
}

// defaultSections returns the 18 default sections for cfg, in spec order.
func defaultSections(cfg *Config) []Section {
	world := trimText(cfg.World)
	situation := trimText(cfg.Situation)
	if situation == "" {
		situation = DefaultSituation
	}
	directive := renderDirective(cfg)
	response := responseLead + "\n" + ResponseShape

	return []Section{
		&stdSection{name: SectionTask, priority: prioTask,
			present: func(e *env) bool { return e.v.Task != nil && !isBlank(e.v.Task.Description) },
			write: func(b *strings.Builder, e *env) {
				b.WriteString(taskPrefix)
				writeFlat(b, e.v.Task.Description, -1)
				b.WriteByte('\n')
				b.WriteString(taskInstruction)
			},
			trim: trimTask,
		},
		&stdSection{name: SectionIdentity,
			write: func(b *strings.Builder, e *env) {
				b.WriteString("You are ")
				writeLabel(b, e.id.Name)
				b.WriteByte('.')
			},
		},
		&stdSection{name: SectionWorld,
			present: func(*env) bool { return world != "" },
			write: func(b *strings.Builder, _ *env) {
				b.WriteString(headWorld)
				b.WriteByte('\n')
				b.WriteString(world)
			},
		},
		&stdSection{name: SectionSituation, priority: prioSituation,
			write: func(b *strings.Builder, e *env) {
				b.WriteString(headSituation)
				b.WriteByte('\n')
				b.WriteString(situation)
				if Present(e.v) && !e.batch {
					b.WriteByte('\n')
					b.WriteString(PresenceLine)
				}
			},
			trim: func(e *env, maxChars int) string {
				footer := ""
				if Present(e.v) && !e.batch {
					footer = PresenceLine
				}
				return trimProse(headSituation, "", situation, footer, maxChars)
			},
		},
		&stdSection{name: SectionInnerState,
			write: func(b *strings.Builder, e *env) {
				b.WriteString(headInner)
				b.WriteByte('\n')
				st := e.v.Suffering
				if st == nil {
					st = &zeroSuffering
				}
				b.WriteString(st.Fragment())
			},
		},
		&stdSection{name: SectionWorldview, priority: prioWorldview,
			write: func(b *strings.Builder, e *env) {
				writeProse(b, headWorldview, worldviewText(e), noWorldview)
			},
			trim: func(e *env, maxChars int) string {
				return trimProse(headWorldview, "", worldviewText(e), "", maxChars)
			},
		},
		&stdSection{name: SectionOpinions, priority: prioOpinions,
			write: writeOpinions,
			trim: func(e *env, maxChars int) string {
				return trimLines(headOpinions, opinionLines(e), true, "", maxChars)
			},
		},
		&stdSection{name: SectionQuestions, priority: prioQuestions,
			write: writeQuestions,
			trim: func(e *env, maxChars int) string {
				return trimLines(headQuestions, questionLines(e), true, "", maxChars)
			},
		},
		&stdSection{name: SectionHistory, priority: prioHistory,
			write: func(b *strings.Builder, e *env) {
				writeProse(b, headHistory, historyText(e), noHistory)
			},
			trim: func(e *env, maxChars int) string {
				return trimProse(headHistory, "", historyText(e), "", maxChars)
			},
		},
		&stdSection{name: SectionPeers, priority: prioPeers,
			write: writePeers,
			trim: func(e *env, maxChars int) string {
				return trimLines(headPeers, peerLines(e), false, "", maxChars)
			},
		},
		&stdSection{name: SectionDiscoveries, priority: prioDiscoveries,
			write: writeDiscoveries,
			trim: func(e *env, maxChars int) string {
				return trimLines(headDiscoveries, discoveryLines(e), true, "", maxChars)
			},
		},
		&stdSection{name: SectionTime, write: writeTime},
		&stdSection{name: SectionLastOutcome, priority: prioLastOutcome,
			present: func(e *env) bool {
				g := e.id.LastEnded()
				return g != nil && (!isBlank(g.Outcome) || len(nonBlank(g.BrokenTools)) > 0)
			},
			write: writeLastOutcome,
			trim:  trimLastOutcome,
		},
		&stdSection{name: SectionRecentGoals, priority: prioRecentGoals,
			present: func(e *env) bool { return len(e.id.Goals) > 0 },
			write:   writeRecentGoals,
			trim: func(e *env, maxChars int) string {
				return trimLines(headRecent, recentGoalLines(e), true, repetitive, maxChars)
			},
		},
		&stdSection{name: SectionPeerMessages, priority: prioPeerMessages,
			present: func(e *env) bool { return len(shownMessages(e)) > 0 },
			write:   writePeerMessages,
			trim: func(e *env, maxChars int) string {
				return trimLines(headPeerMessages, peerMessageLines(e), true, "", maxChars)
			},
		},
		&stdSection{name: SectionHostMessage, priority: prioHostMessage,
			present: func(e *env) bool { return len(shownHost(e)) > 0 },
			write:   writeHostMessages,
			trim:    trimHostMessages,
		},
		&stdSection{name: SectionDirective,
			write: func(b *strings.Builder, _ *env) { b.WriteString(directive) },
		},
		&stdSection{name: SectionResponseFormat,
			write: func(b *strings.Builder, _ *env) { b.WriteString(response) },
		},
	}
}

// renderDirective renders the goal selection directive (spec §2 row 17):
// "---", a blank line, the verbatim directive, the ranked goals, the
// prohibitions and the grounding line, each block omitted when the config
// has none.
func renderDirective(cfg *Config) string {
	var b strings.Builder
	b.WriteString(directiveLead)
	n := 0
	for _, g := range cfg.Goals {
		if isBlank(g) {
			continue
		}
		if n == 0 {
			b.WriteString("\n\n")
			b.WriteString(directiveRanked)
		}
		n++
		b.WriteString("\n  ")
		writeInt(&b, int64(n))
		b.WriteString(". ")
		writeFlat(&b, g, -1)
	}
	if !isBlank(cfg.Prohibitions) {
		b.WriteString("\n\n")
		b.WriteString(directiveNot)
		writeFlat(&b, cfg.Prohibitions, -1)
	}
	if !isBlank(cfg.Grounding) {
		b.WriteString("\n\n")
		writeFlat(&b, cfg.Grounding, -1)
	}
	return b.String()
}

func worldviewText(e *env) string { return prose(e.id.Worldview, e.l.Worldview) }

func historyText(e *env) string { return prose(e.id.Narrative, e.l.NarrativeShown) }

// lastN returns the start index of the last n of length items.
func lastN(length, n int) int { return max(0, length-n) }

// shownFrom returns the start index of the items a list shows: the last
// n, or under [LayoutCache] from [BatchStart].
func (e *env) shownFrom(length, n int, key func(i int) string) int {
	if e.batch {
		return BatchStart(length, n, key)
	}
	return lastN(length, n)
}

// ---- opinions (row 7)

func shownOpinions(e *env) []identity.Opinion {
	ops := e.id.Opinions
	return ops[e.shownFrom(len(ops), e.l.OpinionsShown, func(i int) string { return ops[i].Text }):]
}

func writeOpinion(b *strings.Builder, o identity.Opinion) {
	b.WriteString("  - ")
	if !isBlank(o.Domain) {
		b.WriteByte('[')
		writeFlat(b, o.Domain, -1)
		b.WriteString("] ")
	}
	writeFlat(b, o.Text, -1)
}

func writeOpinions(b *strings.Builder, e *env) {
	b.WriteString(headOpinions)
	ops := shownOpinions(e)
	if len(ops) == 0 {
		b.WriteByte('\n')
		b.WriteString(noOpinions)
		return
	}
	for _, o := range ops {
		b.WriteByte('\n')
		writeOpinion(b, o)
	}
}

func opinionLines(e *env) []string {
	ops := shownOpinions(e)
	out := make([]string, len(ops))
	for i, o := range ops {
		var b strings.Builder
		writeOpinion(&b, o)
		out[i] = b.String()
	}
	return out
}

// ---- open questions (row 8)

func shownQuestions(e *env) []string {
	qs := e.id.Questions
	return qs[e.shownFrom(len(qs), e.l.QuestionsShown, func(i int) string { return qs[i] }):]
}

func writeQuestions(b *strings.Builder, e *env) {
	b.WriteString(headQuestions)
	qs := shownQuestions(e)
	if len(qs) == 0 {
		b.WriteByte('\n')
		b.WriteString(noQuestions)
		return
	}
	for _, q := range qs {
		b.WriteString("\n  - ")
		writeFlat(b, q, -1)
	}
}

func questionLines(e *env) []string {
	qs := shownQuestions(e)
	out := make([]string, len(qs))
	for i, q := range qs {
		out[i] = "  - " + flat(q, -1)
	}
	return out
}

// ---- peers (row 10)

func writePeer(b *strings.Builder, p Peer, max int) {
	b.WriteString("  ")
	if isBlank(p.Name) {
		writeLabel(b, p.ID)
	} else {
		writeLabel(b, p.Name)
	}
	b.WriteString(": ")
	if isBlank(p.Narrative) {
		b.WriteString(noHistory)
		return
	}
	writeFlat(b, p.Narrative, max)
}

func writePeers(b *strings.Builder, e *env) {
	b.WriteString(headPeers)
	if len(e.v.Peers) == 0 && e.v.PeersOmitted == 0 { // only omitted peers: just "(and N others)"
		b.WriteByte('\n')
		b.WriteString(noPeers)
		return
	}
	for _, p := range e.v.Peers {
		b.WriteByte('\n')
		writePeer(b, p, e.l.PeerNarrative)
	}
	if e.v.PeersOmitted > 0 {
		b.WriteByte('\n')
		b.WriteString(othersLine(e.v.PeersOmitted))
	}
}

func peerLines(e *env) []string {
	out := make([]string, len(e.v.Peers))
	for i, p := range e.v.Peers {
		var b strings.Builder
		writePeer(&b, p, e.l.PeerNarrative)
		out[i] = b.String()
	}
	if e.v.PeersOmitted > 0 {
		out = append(out, othersLine(e.v.PeersOmitted))
	}
	return out
}

// othersLine is the peers section's last line when peers are left out
// (spec §8): "  (and 9,991 others)".
func othersLine(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	if n == 1 {
		return "  (and 1 other)"
	}
	return "  (and " + s + " others)"
}

// ---- discoveries (row 11)

func shownDiscoveries(e *env) []identity.Discovery {
	ds := e.id.Discoveries
	return ds[e.shownFrom(len(ds), e.l.DiscoveriesShown, func(i int) string { return ds[i].Text }):]
}

func writeDiscovery(b *strings.Builder, d identity.Discovery, max int) {
	b.WriteString("  - ")
	writeFlat(b, d.Text, max)
	if !isBlank(d.Source) {
		b.WriteString(" (")
		writeFlat(b, d.Source, -1)
		b.WriteByte(')')
	}
}

func writeDiscoveries(b *strings.Builder, e *env) {
	b.WriteString(headDiscoveries)
	ds := shownDiscoveries(e)
	if len(ds) == 0 {
		b.WriteByte('\n')
		b.WriteString(noDiscoveries)
		return
	}
	for _, d := range ds {
		b.WriteByte('\n')
		writeDiscovery(b, d, e.l.DiscoveryChars)
	}
}

func discoveryLines(e *env) []string {
	ds := shownDiscoveries(e)
	out := make([]string, len(ds))
	for i, d := range ds {
		var b strings.Builder
		writeDiscovery(&b, d, e.l.DiscoveryChars)
		out[i] = b.String()
	}
	return out
}

// ---- time (row 12)

// writeTime writes the time section; under [LayoutCache] (e.batch) it
// ends with [PresenceLine] when a person was recently present, which the
// original layout shows in the situation.
func writeTime(b *strings.Builder, e *env) {
	writeTimeLines(b, e)
	if e.batch && Present(e.v) {
		b.WriteByte('\n')
		b.WriteString(PresenceLine)
	}
}

func writeTimeLines(b *strings.Builder, e *env) {
	b.WriteString(headTime)
	b.WriteByte('\n')
	b.WriteString(runningFor)
	if e.v.Now.IsZero() || e.v.Started.IsZero() {
		b.WriteString(unknown)
	} else {
		writeDuration(b, e.v.Now.Sub(e.v.Started))
	}
	b.WriteByte('\n')
	b.WriteString(lastCompleted)
	var last *identity.Goal
	for i := len(e.id.Goals) - 1; i >= 0; i-- {
		if e.id.Goals[i].Status == identity.Done {
			last = &e.id.Goals[i]
			break
		}
	}
	if last == nil || last.Ended.IsZero() || e.v.Now.IsZero() {
		b.WriteString(unknown)
		return
	}
	writeDuration(b, e.v.Now.Sub(last.Ended))
	b.WriteString(" ago")
}

// ---- last outcome (row 13)

func nonBlank(ss []string) []string {
	for _, s := range ss {
		if isBlank(s) {
			out := make([]string, 0, len(ss))
			for _, s := range ss {
				if !isBlank(s) {
					out = append(out, s)
				}
			}
			return out
		}
	}
	return ss
}

func writeBroken(b *strings.Builder, tools []string) {
	b.WriteString(brokenTools)
	for i, t := range tools {
		if i > 0 {
			b.WriteString(", ")
		}
		writeFlat(b, t, -1)
	}
}

// writeLastOutcome writes the last ended goal's status tag and outcome
// summary: "  [FAILED] {summary}" (spec §2 row 13: the status is always
// shown with the summary the goal recorded).
func writeLastOutcome(b *strings.Builder, e *env) {
	g := e.id.LastEnded()
	b.WriteString(headOutcome)
	b.WriteString("\n  ")
	b.WriteString(outcomeTag(g))
	if !isBlank(g.Outcome) {
		b.WriteByte(' ')
		writeFlat(b, g.Outcome, e.l.Outcome)
	}
	if tools := nonBlank(g.BrokenTools); len(tools) > 0 {
		b.WriteByte('\n')
		writeBroken(b, tools)
	}
}

func trimLastOutcome(e *env, maxChars int) string {
	g := e.id.LastEnded()
	var footer string
	if tools := nonBlank(g.BrokenTools); len(tools) > 0 {
		var b strings.Builder
		writeBroken(&b, tools)
		footer = b.String()
	}
	body := outcomeTag(g)
	if text := flat(g.Outcome, e.l.Outcome); text != "" {
		body += " " + text
	}
	return trimProse(headOutcome, "  ", body, footer, maxChars)
}

// outcomeTag is "[DONE]", "[FAILED]" or "[ABANDONED]".
func outcomeTag(g *identity.Goal) string { return "[" + string(g.Status) + "]" }

// ---- recent goals (row 14)

func shownGoals(e *env) []identity.Goal {
	gs := e.id.Goals
	return gs[e.shownFrom(len(gs), e.l.GoalsShown, func(i int) string { return gs[i].ID + gs[i].Objective }):]
}

// writeGoal writes one line of the recent goals: the status tag of an
// ended goal and the objective on one line, cut to l.GoalChars (80)
// characters, or 5 fewer (75) after a tag, as the original (spec §2
// row 14).
func writeGoal(b *strings.Builder, g *identity.Goal, l *identity.Limits) {
	b.WriteString("  - ")
	n := l.GoalChars
	if g.Status.Ended() {
		b.WriteByte('[')
		b.WriteString(string(g.Status))
		b.WriteString("] ")
		n = max(n-goalTagChars, 1)
	}
	writeFlat(b, g.Objective, n)
}

// goalTagChars is how many fewer characters of an objective the recent
// goals show after a status tag (the original's 75 instead of 80).
const goalTagChars = 5

func writeRecentGoals(b *strings.Builder, e *env) {
	b.WriteString(headRecent)
	gs := shownGoals(e)
	for i := range gs {
		b.WriteByte('\n')
		writeGoal(b, &gs[i], &e.l)
	}
	b.WriteByte('\n')
	b.WriteString(repetitive)
}

func recentGoalLines(e *env) []string {
	gs := shownGoals(e)
	out := make([]string, len(gs))
	for i := range gs {
		var b strings.Builder
		writeGoal(&b, &gs[i], &e.l)
		out[i] = b.String()
	}
	return out
}

// ---- peer messages (row 15)

// shownMessages returns the last PeerMessagesShown non-blank inbox messages,
// oldest first.
func shownMessages(e *env) []identity.AgentMessage {
	return lastNonBlank(e.v.Inbox, e.l.PeerMessagesShown)
}

// lastNonBlank returns the last n messages of in whose text is not blank,
// oldest first. It allocates only when a blank message must be skipped.
func lastNonBlank(in []identity.AgentMessage, n int) []identity.AgentMessage {
	start := len(in)
	kept := 0
	blank := false
	for start > 0 && kept < n {
		start--
		if isBlank(in[start].Text) {
			blank = true
			continue
		}
		kept++
	}
	if !blank {
		return in[start:]
	}
	out := make([]identity.AgentMessage, 0, kept)
	for _, m := range in[start:] {
		if !isBlank(m.Text) {
			out = append(out, m)
		}
	}
	return out
}

func writePeerMessage(b *strings.Builder, m identity.AgentMessage, max int) {
	b.WriteString("  [")
	if isBlank(m.From) {
		b.WriteString(unknown)
	} else {
		writeLabel(b, m.From)
	}
	b.WriteString("]: ")
	writeFlat(b, m.Text, max)
}

func writePeerMessages(b *strings.Builder, e *env) {
	b.WriteString(headPeerMessages)
	for _, m := range shownMessages(e) {
		b.WriteByte('\n')
		writePeerMessage(b, m, e.l.PeerMessage)
	}
}

func peerMessageLines(e *env) []string {
	ms := shownMessages(e)
	out := make([]string, len(ms))
	for i, m := range ms {
		var b strings.Builder
		writePeerMessage(&b, m, e.l.PeerMessage)
		out[i] = b.String()
	}
	return out
}

// ---- host message (row 16)

// shownHost returns the unread host messages the section shows: the last
// PeerMessagesShown non-blank ones, oldest first. The agent empties the
// host queue after a cycle, so every message it read must be shown.
func shownHost(e *env) []identity.AgentMessage {
	return lastNonBlank(e.v.Host, e.l.PeerMessagesShown)
}

// writeHostMessages writes "A PERSON SAID:" and then each shown message on
// a line of its own, flattened and cut to HostMessage characters. With one
// message this is exactly the spec's "A PERSON SAID:\n{message}".
func writeHostMessages(b *strings.Builder, e *env) {
	b.WriteString(headHost)
	for _, m := range shownHost(e) {
		b.WriteByte('\n')
		writeFlat(b, m.Text, e.l.HostMessage)
	}
}

func hostLines(e *env) []string {
	ms := shownHost(e)
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = flat(m.Text, e.l.HostMessage)
	}
	return out
}

// trimHostMessages shrinks the section under a budget: a single message
// keeps its beginning, then the marker; of several, the oldest go first.
func trimHostMessages(e *env, maxChars int) string {
	lines := hostLines(e)
	if len(lines) == 1 {
		return trimProse(headHost, "", lines[0], "", maxChars)
	}
	return trimLines(headHost, lines, true, "", maxChars)
}

// ---- task (row 1)

func trimTask(e *env, maxChars int) string {
	desc := flat(e.v.Task.Description, -1)
	fixed := runes.Count(taskPrefix) + 1 + runes.Count(CutMarker) + 1 + runes.Count(taskInstruction)
	var b strings.Builder
	if avail := maxChars - fixed; avail > 0 {
		b.WriteString(taskPrefix)
		writeFlat(&b, desc, avail)
	} else {
		b.WriteString(strings.TrimSpace(taskPrefix))
	}
	b.WriteByte('\n')
	b.WriteString(CutMarker)
	b.WriteByte('\n')
	b.WriteString(taskInstruction)
	return b.String()
}

// SectionFunc is a [Section] (and a [Trimmer]) made of functions: the
// quickest way to write a custom section.
//
//	notes := prompt.SectionFunc{
//		ID:   "tool_notes",
//		When: func(v *prompt.View) bool { _, ok := Notes.Get(v); return ok },
//		Text: func(v *prompt.View) string {
//			n, _ := Notes.Get(v)
//			return "TOOL NOTES:\n" + n
//		},
//		Priority: 15, // shrinks after discoveries (10), before history (20)
//	}
//	err := asm.InsertAfter(prompt.SectionDiscoveries, notes)
//
// The assembler trims leading and trailing line breaks from Text's result;
// a blank result makes the section absent, like a false When.
type SectionFunc struct {
	// ID is the section's name (see [Section]); it must be unique within
	// an [Assembler] and not empty.
	ID string
	// When reports whether the section appears (the conditional flag);
	// nil means always.
	When func(v *View) bool
	// Text renders the section (required). It must be pure and must not
	// modify v.
	Text func(v *View) string
	// Priority is the trim priority (see [Trimmer] and [Budget]); 0 means
	// the section never shrinks.
	Priority int
	// Shrink optionally cuts the section to at most maxChars characters
	// under a budget, marking the cut with [CutMarker]; nil means
	// [trimSection] (keep the first line and the beginning of the rest).
	Shrink func(v *View, maxChars int) string
}

var _ Trimmer = SectionFunc{}

// Name implements [Section]; it returns f.ID.
func (f SectionFunc) Name() string { return f.ID }

// Render implements [Section]: "" when When reports false or Text is nil,
// Text(v) otherwise.
func (f SectionFunc) Render(v *View) string {
	if f.Text == nil || (f.When != nil && !f.When(v)) {
		return ""
	}
	return f.Text(v)
}

// TrimPriority implements [Trimmer].
func (f SectionFunc) TrimPriority() int { return max(f.Priority, 0) }

// Trim implements [Trimmer]: the rendered text when it fits in maxChars or
// Priority is 0, otherwise Shrink(v, maxChars) or [trimSection].
func (f SectionFunc) Trim(v *View, maxChars int) string {
	text := trimNewlines(f.Render(v))
	if f.TrimPriority() == 0 || runes.Count(text) <= maxChars {
		return text
	}
	if f.Shrink != nil {
		return f.Shrink(v, maxChars)
	}
	return trimSection(text, maxChars)
}

// writeProse writes a header line, then text, or placeholder when text is
// empty.
func writeProse(b *strings.Builder, head, text, placeholder string) {
	b.WriteString(head)
	b.WriteByte('\n')
	if text == "" {
		text = placeholder
	}
	b.WriteString(text)
}
