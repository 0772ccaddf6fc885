//go:build race

package pgstore_test

// raceEnabled slows the failover test's heartbeat: the race detector makes
// every cycle several times slower on the two cores CI has.
const raceEnabled = true
