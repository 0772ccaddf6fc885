package event

// StepInfo describes a workflow step, on [Step].
type StepInfo struct {
	// Workflow is the step's position, e.g. 2 of 4: Index from 1, Of the
	// number of steps.
	Index int `json:"index"`
	Of    int `json:"of"`
	// Name and Type are the step's ("self_audit", "llm" or "code").
	Name string `json:"name"`
	Type string `json:"type"`
	// Status is "done", "skipped" (its condition did not hold) or
	// "failed".
	Status string `json:"status"`
	// Output is the step's output as JSON or text, cut to 500
	// characters; Why says why it was skipped or failed.
	Output string `json:"output,omitempty"`
	Why    string `json:"why,omitempty"`
}
