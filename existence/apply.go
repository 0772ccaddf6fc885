package existence

import (
	"fmt"
	"strings"
	"time"

	"github.com/existence-loop/sdk/existence/event"
	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/internal/runes"
	"github.com/existence-loop/sdk/prompt"
	"github.com/existence-loop/sdk/suffering"
)

// apply applies a validated response to st (spec §3 field table, with the
// original's caps on what the model writes) and returns the
// events describing each change:
//
//   - worldview_update, when non-null and longer than
//     Limits.WorldviewIgnored (20) characters once trimmed, overwrites the
//     worldview cut to Limits.Worldview (600) characters;
//   - the first Limits.QuestionsPerReply (3) new_open_questions are
//     appended, each cut to Limits.QuestionChars (200) characters, unless
//     already held; the oldest fall off beyond 12;
//   - the first Limits.OpinionsPerReply (2) new_opinions are appended, each
//     cut to Limits.OpinionChars (200) characters and its domain to
//     Limits.DomainChars (60); the oldest fall off beyond 20;
//   - up to 2 suffering_assessment.new_stressors are added (the rest are
//     reported as [event.StressorDropped]), and the first
//     Limits.ResolvedPerReply (2) resolved entries are resolved, except the
//     types the assessment owns (repeated_failure, futility,
//     purposelessness), which only observable behaviour resolves (spec §4;
//     reported as [event.StressorDropped]).
//
// Every cap that applies is reported as an [event.Capped].
//
// content and reasoning are not applied here: the caller makes content the
// new goal. Apply does not touch the goal history.
func apply(st *identity.AgentState, r *prompt.Response, now time.Time, l identity.Limits) []event.Event {
	l = l.WithDefaults()
	// One allocation for the usual events: a worldview, the questions and
	// opinions taken, and the stressor entries (caps may add a few more).
	n := 1 + min(len(r.NewOpenQuestions), l.QuestionsPerReply) + min(len(r.NewOpinions), l.OpinionsPerReply)
	if sa := r.SufferingAssessment; sa != nil {
		n += len(sa.NewStressors) + min(len(sa.Resolved), l.ResolvedPerReply)
	}
	evs := make([]event.Event, 0, n)
	capped := func(cause, format string, args ...any) {
		evs = append(evs, event.Event{Kind: event.Capped, Reason: cause, Text: fmt.Sprintf(format, args...)})
	}
	id := &st.Identity
	if r.WorldviewUpdate != nil {
		wv := strings.TrimSpace(*r.WorldviewUpdate)
		switch n := runes.Count(wv); {
		case n == 0:
		case n <= l.WorldviewIgnored:
			capped("worldview_short", "worldview update of %d characters ignored (at most %d): %q", n, l.WorldviewIgnored, wv)
		case id.SetWorldview(wv, l):
			evs = append(evs, event.Event{Kind: event.Worldview, Text: id.Worldview})
		}
	}
	qs := r.NewOpenQuestions
	if n := len(qs) - l.QuestionsPerReply; n > 0 {
		capped("questions_per_reply", "%d new open questions dropped: at most %d per reply", n, l.QuestionsPerReply)
		qs = qs[:l.QuestionsPerReply]
	}
	for _, q := range qs {
		q = strings.TrimSpace(q)
		if q == "" {
			continue
		}
		if id.HasQuestion(runes.Head(q, l.QuestionChars)) {
			capped("question_duplicate", "question already held, not added again: %q", q)
			continue
		}
		if n := runes.Count(q); n > l.QuestionChars {
			capped("question_cut", "question cut from %d to %d characters", n, l.QuestionChars)
		}
		if id.AddQuestion(q, l) {
			evs = append(evs, event.Event{Kind: event.Question, Text: id.Questions[len(id.Questions)-1]})
		}
	}
	ops := r.NewOpinions
	if n := len(ops) - l.OpinionsPerReply; n > 0 {
		capped("opinions_per_reply", "%d new opinions dropped: at most %d per reply", n, l.OpinionsPerReply)
		ops = ops[:l.OpinionsPerReply]
	}
	for _, o := range ops {
		text, domain := strings.TrimSpace(o.Opinion), strings.TrimSpace(o.Domain)
		if text == "" {
			continue
		}
		if n := runes.Count(text); n > l.OpinionChars {
			capped("opinion_cut", "opinion cut from %d to %d characters", n, l.OpinionChars)
		}
		if n := runes.Count(domain); n > l.DomainChars {
			capped("domain_cut", "opinion domain cut from %d to %d characters", n, l.DomainChars)
		}
		if id.AddOpinion(identity.Opinion{Text: text, Domain: domain, Formed: now}, l) {
			added := id.Opinions[len(id.Opinions)-1]
			evs = append(evs, event.Event{Kind: event.Opinion, Text: added.Text, Domain: added.Domain})
		}
	}
	if sa := r.SufferingAssessment; sa != nil {
		for i, ns := range sa.NewStressors {
			if i >= maxNewStressors {
				evs = append(evs, event.Event{Kind: event.StressorDropped, Text: fmt.Sprintf("%s: only %d new stressors are taken per cycle", ns.Type, maxNewStressors)})
				continue
			}
			s, err := st.Suffering.Add(now, suffering.Input{Type: ns.Type, Description: ns.Description, Condition: ns.Condition})
			if err != nil {
				evs = append(evs, event.Event{Kind: event.StressorDropped, Text: err.Error(), Err: err})
				continue
			}
			evs = append(evs, event.Event{Kind: event.StressorAdded, By: "self-report", Text: s.Description, Stressor: &s, Load: st.Suffering.Load()})
		}
		resolved := sa.Resolved
		if n := len(resolved) - l.ResolvedPerReply; n > 0 {
			capped("resolved_per_reply", "%d resolved entries dropped: at most %d per reply", n, l.ResolvedPerReply)
			resolved = resolved[:l.ResolvedPerReply]
		}
		for _, rs := range resolved {
			if assessed(rs.Type) {
				if _, ok := st.Suffering.Find(rs.Type); ok {
					evs = append(evs, event.Event{Kind: event.StressorDropped, Text: fmt.Sprintf("%s: resolved only by observable behaviour, not by self-report (spec §4)", suffering.Normalize(rs.Type))})
				}
				continue
			}
			if s, ok := st.Suffering.Resolve(now, rs.Type, rs.Reason); ok {
				evs = append(evs, event.Event{Kind: event.StressorResolved, By: "self-report", Text: rs.Reason, Stressor: &s, Load: st.Suffering.Load()})
			}
		}
	}
	for i := range evs {
		evs[i].Time = now
	}
	return evs
}

// assessed reports whether a stressor type is owned by the assessment
// (spec §4): only observable behaviour resolves it.
func assessed(typ string) bool {
	switch suffering.Normalize(typ) {
	case suffering.RepeatedFailure, suffering.Futility, suffering.Purposelessness:
		return true
	}
	return false
}

// anticipate returns the anticipatory signal (spec §4) for the domains of
// the response's new opinions, or of the agent's own domains.
func anticipate(st *identity.AgentState, r *prompt.Response) (string, bool) {
	var domains []string
	if r != nil {
		for _, o := range r.NewOpinions {
			domains = append(domains, o.Domain)
		}
	}
	domains = append(domains, st.Identity.Domains...)
	for _, d := range domains {
		if sig, ok := st.Suffering.Anticipate(d); ok {
			return sig, true
		}
	}
	return "", false
}
