package existence

import (
	"fmt"
	"strings"
	"time"

	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/prompt"
	"github.com/existence-loop/sdk/suffering"
)

// Apply applies a validated response to st (spec §3 field table) and
// returns the events describing each change:
//
//   - worldview_update, when non-null and not blank, overwrites the
//     worldview cut to Limits.Worldview (600) characters;
//   - new_open_questions and new_opinions are appended, oldest falling off
//     beyond 12 and 20;
//   - up to 2 suffering_assessment.new_stressors are added (the rest are
//     reported as [EventStressorDropped]), and every resolved entry is
//     resolved, except the types the assessment owns (repeated_failure,
//     futility, purposelessness), which only observable behaviour resolves
//     (spec §4; reported as [EventStressorDropped]).
//
// content and reasoning are not applied here: the caller makes content the
// new goal. Apply does not touch the goal history.
func Apply(st *identity.State, r *prompt.Response, now time.Time, l identity.Limits) []Event {
	var evs []Event
	id := &st.Identity
	if r.WorldviewUpdate != nil && id.SetWorldview(*r.WorldviewUpdate, l) {
		evs = append(evs, Event{Kind: EventWorldview, Text: id.Worldview})
	}
	for _, q := range r.NewOpenQuestions {
		if id.AddQuestion(q, l) {
			evs = append(evs, Event{Kind: EventQuestion, Text: strings.TrimSpace(q)})
		}
	}
	for _, o := range r.NewOpinions {
		if id.AddOpinion(identity.Opinion{Text: o.Opinion, Domain: o.Domain, Formed: now}, l) {
			evs = append(evs, Event{Kind: EventOpinion, Text: strings.TrimSpace(o.Opinion), Domain: strings.TrimSpace(o.Domain)})
		}
	}
	if sa := r.SufferingAssessment; sa != nil {
		for i, ns := range sa.NewStressors {
			if i >= MaxNewStressors {
				evs = append(evs, Event{Kind: EventStressorDropped, Text: fmt.Sprintf("%s: only %d new stressors are taken per cycle", ns.Type, MaxNewStressors)})
				continue
			}
			s, err := st.Suffering.Add(now, suffering.Input{Type: ns.Type, Description: ns.Description, Condition: ns.Condition})
			if err != nil {
				evs = append(evs, Event{Kind: EventStressorDropped, Text: err.Error(), Err: err})
				continue
			}
			evs = append(evs, Event{Kind: EventStressorAdded, Cause: "self-report", Text: s.Description, Stressor: &s, Load: st.Suffering.Load()})
		}
		for _, rs := range sa.Resolved {
			if assessed(rs.Type) {
				if _, ok := st.Suffering.Find(rs.Type); ok {
					evs = append(evs, Event{Kind: EventStressorDropped, Text: fmt.Sprintf("%s: resolved only by observable behaviour, not by self-report (spec §4)", suffering.Normalize(rs.Type))})
				}
				continue
			}
			if s, ok := st.Suffering.Resolve(now, rs.Type, rs.Reason); ok {
				evs = append(evs, Event{Kind: EventStressorResolved, Cause: "self-report", Text: rs.Reason, Stressor: &s, Load: st.Suffering.Load()})
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
func anticipate(st *identity.State, r *prompt.Response) (string, bool) {
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
