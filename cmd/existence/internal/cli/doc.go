// Package cli holds the subcommands of the existence command
// (cmd/existence):
//
//	run       Cedar, Cipher and Vault as peers (the trio)
//	swarm     the scale benchmark: N agents on a simulated model
//	simulate  days of agent life in seconds, with plots
//	import    a hollow-agentOS memory directory into a store
//	serve     the monitor over a store, for agents running elsewhere
//	tui       a full-screen terminal view attached to a running monitor
//	version   the module version and VCS revision
//	help      the command list, or one command's usage
//
// [Main] runs a command line and returns the exit code: 0 when the command
// did what was asked or printed its help, 2 for an unknown command or a
// bad flag (with the reason on standard error), 1 for a failure while
// running ("existence CMD: reason" on standard error). Each command parses
// its flags with the standard flag package, one FlagSet per command, and
// the commands share flag names for the same things: -store, -state,
// -heartbeat, -json, -seed, -provider, -llm-url, -model, -http,
// -http-token, -agents, -duration and -v.
package cli
