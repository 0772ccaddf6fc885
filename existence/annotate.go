package existence

import (
	"strings"

	"github.com/existence-loop/sdk/existence/event"
	"github.com/existence-loop/sdk/identity"
)

// GoalAnnotator looks at a goal the model just chose, before it starts, and
// may return a note to append to it (spec §3 "Goal annotation"; the
// original's opinion-conflict check). The loop appends "\n\n" + note to the objective and
// reports an [event.GoalAnnotated]; "" means no note. It is called for goals
// the agent chose itself (the spec §6 fallback included), never for an
// assigned task's goal. id is the agent's identity after the reply was
// applied; Annotate must not modify it. It runs with the agent's lock
// held, so it must be quick and must not call the agent.
//
// [Config].Annotator sets it: nil means [OpinionConflict], the original's
// rule; [NoAnnotation] turns annotation off.
type GoalAnnotator interface {
	Annotate(id *identity.Identity, objective string) (note string)
}

// GoalAnnotatorFunc adapts a function to [GoalAnnotator].
type GoalAnnotatorFunc func(id *identity.Identity, objective string) string

// Annotate implements [GoalAnnotator].
func (f GoalAnnotatorFunc) Annotate(id *identity.Identity, objective string) string {
	return f(id, objective)
}

// NoAnnotation is a [GoalAnnotator] that never adds a note.
var NoAnnotation GoalAnnotator = GoalAnnotatorFunc(func(*identity.Identity, string) string { return "" })

// conflictWords are the words that make an opinion a reservation in the
// original's opinion-conflict rule (see [OpinionConflict]), in lower case.
// To change the rule, set a GoalAnnotator of your own.
var conflictWords = [...]string{
	"redundant", "too many", "avoid", "stop", "not useful",
	"waste", "pointless", "already", "shouldn't", "wrong",
}

// OpinionConflict is the default [GoalAnnotator], the original's rule
// (spec §3 "Goal annotation"): the first opinion, oldest first, whose non-empty domain
// appears in the objective and whose text contains one of the words
// "redundant", "too many", "avoid", "stop", "not useful", "waste",
// "pointless", "already", "shouldn't" or "wrong" (both compared in lower
// case) gives the note
//
//	Note: Opinion conflict: you believe '{opinion}' but this goal involves {domain}. Proceed carefully and log any dissonance.
//
// with the domain in lower case, as the original wrote it.
var OpinionConflict GoalAnnotator = GoalAnnotatorFunc(opinionConflict)

func opinionConflict(id *identity.Identity, objective string) string {
	goal := strings.ToLower(objective)
	for _, op := range id.Opinions {
		domain := strings.ToLower(strings.TrimSpace(op.Domain))
		if domain == "" || !strings.Contains(goal, domain) {
			continue
		}
		text := strings.ToLower(op.Text)
		for _, w := range conflictWords {
			if strings.Contains(text, w) {
				return "Note: Opinion conflict: you believe '" + op.Text + "' but this goal involves " + domain + ". Proceed carefully and log any dissonance."
			}
		}
	}
	return ""
}

// annotateLocked appends the annotator's note to g, a goal the agent chose
// itself, and queues [event.GoalAnnotated]. a.mu must be held.
func (a *Agent) annotateLocked(st *identity.AgentState, g *identity.Goal) {
	if g.TaskID != "" {
		return
	}
	ann := a.cfg.Annotator
	if ann == nil {
		ann = OpinionConflict
	}
	note := strings.TrimSpace(ann.Annotate(&st.Identity, g.Objective))
	if note == "" {
		return
	}
	a.queue(event.Event{Kind: event.GoalAnnotated, Text: note, Goal: g.Objective})
	g.Objective += "\n\n" + note
}
