// Package wire is the seam between an agent (package existence) and the
// runner that schedules it: what a runner needs of an agent ([Agent]),
// what it gives an agent besides its Config ([Hooks]), and what a
// dispatched cycle carries to the agent ([Dispatch]). It is internal to
// existence/...: neither side's public API names it.
//
// The agent side may not import the runner (the runner imports it), so
// the runner reaches an agent only through [Agent], which an unexported
// adapter in package existence implements over *existence.Agent.
package wire
