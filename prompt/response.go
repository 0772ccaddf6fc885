package prompt

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
}

// NewOpinion is one entry of Response.NewOpinions.
type NewOpinion struct {
	Opinion string `json:"opinion"`
	Domain  string `json:"domain"`
}

// SufferingAssessment is the agent's self-assessment: up to 2 new stressors
// are added per cycle (spec §3), any number resolved.
type SufferingAssessment struct {
	NewStressors []NewStressor `json:"new_stressors,omitempty"`
	Resolved     []Resolution  `json:"resolved,omitempty"`
}

// NewStressor is a stressor the agent reports. Condition is its observable
// resolution condition.
type NewStressor struct {
	Type        string `json:"type"`
	Description string `json:"description"`
	Condition   string `json:"condition"`
}

// Resolution is a stressor the agent reports as resolved, with the reason.
type Resolution struct {
	Type   string `json:"type"`
	Reason string `json:"reason"`
}
