package backoff

import (
	"math"
	"time"
)

// Next returns the wait after a failure that follows a wait of prev: twice
// prev, at least first and at most limit (limit below first means first).
// prev is 0 (or less) for the first failure in a row, which gives first;
// reset prev to 0 after a success.
func Next(prev, first, limit time.Duration) time.Duration {
	limit = max(limit, first)
	if prev > limit/2 {
		return limit
	}
	return min(max(2*prev, first), limit)
}

// Nth returns the wait after the n-th failure in a row: first·2^(n−1), at
// most limit (limit below first means first). n below 1 counts as 1; a
// limit of 0 or less means no limit (the largest Duration). Nth(n) is Next
// applied n times from 0.
func Nth(n int, first, limit time.Duration) time.Duration {
	if limit <= 0 {
		limit = math.MaxInt64
	}
	d := Next(0, first, limit)
	for i := 1; i < n && d < max(limit, first); i++ {
		d = Next(d, first, limit)
	}
	return d
}
