// Package clock is the module's one time source: the [Clock] interface the
// agents, the runner and the memory read the time from and wait on, the
// real clock [System], and [Virtual], a manual clock for deterministic
// tests and simulations. It imports nothing of the SDK: every other
// package may use it.
package clock
