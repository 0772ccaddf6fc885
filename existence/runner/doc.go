// Package runner runs many existence agents as peers in one process: a
// [Runner] schedules their cycles in two lanes of workers (priority and
// autonomy), shows each its peers, shares a board of slots, a token budget
// and background minds among them, and, with leases, shares agents with
// other processes. [Runner.RunVirtual] drives them in virtual time
// (existence/simulate). An agent alone runs with existence.Agent.Run, on
// the same scheduler.
//
// Layer: runner stands above package existence (it imports it; existence
// never imports it) and reaches agents through an internal seam.
package runner
