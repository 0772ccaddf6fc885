//go:build !unix

package cli

import "time"

// cpuTime returns 0: the swarm's CPU figure is measured on Unix only.
func cpuTime() time.Duration { return 0 }
