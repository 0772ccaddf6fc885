// Command existence runs and watches existence-loop agents: the trio
// (run), the scale benchmark (swarm), simulated long runs (simulate), the
// import of a hollow-agentOS memory (import), an agent's long-term
// memories (memory), a monitor over a store (serve), a terminal view
// attached to a monitor (tui) and the version (version).
//
//	go install ./cmd/existence   # from a clone: the module is not published yet
//	existence help
//
// The commands live in the module's cmd/existence/internal/cli package.
package main
