// Package budget holds the token budget's value types: a [Budget] of
// tokens over a sliding window (with a reserve for the priority lane),
// its text form read by [Parse] ("50000/1h+5000"), and the [Status] an
// agent, a runner and the budget_exhausted event report. The accounting
// itself (charging each model call's tokens, holding autonomy while a
// budget is spent) is the agent's and the runner's; spec §1 keeps the
// heartbeat going meanwhile.
package budget
