// Package workflow runs an existence cycle as a sequence of steps, in
// place of the single existence prompt: agent_ecology's workflows (its
// Plan #70) and the VSM agents of its Plan #82 (the adaptive architect's
// compute_metrics → self_audit → review_strategy → decide_action, the
// strategic integrator's load_goals → strategic_review → tactical_plan →
// decide_action).
//
// A [Workflow] is a list of [Step]s. An LLM step sends its prompt, a
// text/template over [Data] (the agent's state, the metrics, the goal
// hierarchy and the earlier steps' outputs), to the agent's model, and its
// output is the reply (checked against the step's JSON Schema when it has
// one). A code step runs a Go function registered by name ([Action]);
// compute_metrics, load_goals and update_goals are built in. A step may
// be conditional ([Condition]: every N cycles, when stuck, under a success
// rate). The last step's output is the cycle's reply, parsed and validated
// as every existence reply (spec §3).
//
// [New] returns an existence.CycleStrategy: set it as existence.Config's
// Cycle. Each step is an event.Step in the thoughts log and an
// OpenTelemetry span; its model calls go through the agent's model, so
// their tokens count in its usage and against its budget, and it runs in
// the agent's lane.
package workflow
