// Package simulate runs existence-loop agents for simulated days in seconds.
package simulate
