package prompt

import "encoding/json"

// Response is the JSON object the model must answer with (spec §3). Its JSON
// Schema, generated from this type by [Schema], is what is sent to the model
// as the structured-output format, and what [ParseResponse] validates
// against.
type Response struct {
	// Action is always "goal" after parsing (other values are normalised).
	Action string `json:"action" jsonschema:"enum=goal"`
	// Content becomes the agent's next goal.
	Content string `json:"content" jsonschema:"description=what you're doing — be honest\\, not performative"`
	// Reasoning is what drove the choice; logged, not stored in identity.
	Reasoning string `json:"reasoning" jsonschema:"description=what actually drove this — not what sounds right\\, what's true"`
	// WorldviewUpdate, when non-nil and not blank, overwrites the
	// worldview (cut to 600 characters).
	WorldviewUpdate *string `json:"worldview_update,omitempty" jsonschema:"description=how understanding shifted\\, or null"`
	// NewOpenQuestions are appended to the open questions (cap 12).
	NewOpenQuestions []string `json:"new_open_questions,omitempty"`
	// NewOpinions are appended to the opinions (cap 20).
	NewOpinions []NewOpinion `json:"new_opinions,omitempty"`
	// SufferingAssessment carries the agent's own stressor changes.
	SufferingAssessment *SufferingAssessment `json:"suffering_assessment,omitempty"`
	// WorkingMemory is the reply's "working_memory" value as compact
	// JSON, nil when absent or null. It is not part of [Schema] (which
	// is unchanged: the original had no such field); an agent whose loop
	// allows a working memory is told of it by the working memory
	// section ([WorkingMemorySection]), and the loop checks that it is
	// an object within its cap.
	WorkingMemory json.RawMessage `json:"working_memory,omitempty" jsonschema:"-"`
}

// NewOpinion is one entry of Response.NewOpinions.
type NewOpinion struct {
	// Opinion is the opinion's text (required in the JSON).
	Opinion string `json:"opinion"`
	// Domain is what the opinion is about, e.g. "architecture"; "" when
	// the model left it out.
	Domain string `json:"domain"`
}

// SufferingAssessment is the agent's self-assessment: up to 2 new stressors
// are added per cycle (spec §3), any number resolved.
type SufferingAssessment struct {
	// NewStressors are stressors the agent reports; only the first 2 are
	// added, and a type already active is not added again (spec §3, §4).
	NewStressors []NewStressor `json:"new_stressors,omitempty"`
	// Resolved are stressors the agent reports as resolved. The existence
	// package ignores those owned by the assessment (repeated_failure,
	// futility, purposelessness), which only observable behaviour
	// resolves (spec §4).
	Resolved []Resolution `json:"resolved,omitempty"`
}

// NewStressor is a stressor the agent reports. Condition is its observable
// resolution condition.
type NewStressor struct {
	// Type is the stressor type, e.g. "futility" or "invisibility"; it is
	// normalised (trimmed, lower-cased, spaces to "_") and selects the
	// escalation rate (spec §4).
	Type string `json:"type"`
	// Description says what hurts, in the agent's words.
	Description string `json:"description"`
	// Condition is the observable condition under which it resolves,
	// shown in the prompt as "Will ease when: {condition}".
	Condition string `json:"condition"`
}

// Resolution is a stressor the agent reports as resolved, with the reason.
type Resolution struct {
	// Type is the type of the active stressor to resolve (normalised as
	// for [NewStressor].Type); an inactive type changes nothing.
	Type string `json:"type"`
	// Reason says why it is resolved; it is kept in the resolved history.
	Reason string `json:"reason"`
}
