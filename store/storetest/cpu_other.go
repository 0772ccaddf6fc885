//go:build !unix

package storetest

import "time"

// cpuTime reports that the CPU time cannot be read here.
func cpuTime() (time.Duration, bool) { return 0, false }
