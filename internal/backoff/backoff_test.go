package backoff

import (
	"fmt"
	"math"
	"testing"
	"time"
)

func TestNext(t *testing.T) {
	s, m := time.Second, time.Minute
	for _, c := range []struct{ prev, first, limit, want time.Duration }{
		{0, s, m, s},
		{-s, s, m, s},
		{s, s, m, 2 * s},
		{16 * s, s, m, 32 * s},
		{32 * s, s, m, m},
		{m, s, m, m},
		{2 * m, s, m, m},
		{0, m, s, m}, // a limit below first means first
		{math.MaxInt64, s, math.MaxInt64, math.MaxInt64},
	} {
		if got := Next(c.prev, c.first, c.limit); got != c.want {
			t.Errorf("Next(%v, %v, %v) = %v, want %v", c.prev, c.first, c.limit, got, c.want)
		}
	}
}

func TestNth(t *testing.T) {
	s := time.Second
	for _, c := range []struct {
		n                  int
		first, limit, want time.Duration
	}{
		{0, s, 5 * time.Minute, s},
		{1, s, 5 * time.Minute, s},
		{2, s, 5 * time.Minute, 2 * s},
		{9, s, 5 * time.Minute, 256 * s},
		{10, s, 5 * time.Minute, 5 * time.Minute},
		{1000, s, 5 * time.Minute, 5 * time.Minute},
		{70, s, 0, math.MaxInt64}, // no limit: never overflows
		{3, 0, 0, 0},
	} {
		if got := Nth(c.n, c.first, c.limit); got != c.want {
			t.Errorf("Nth(%d, %v, %v) = %v, want %v", c.n, c.first, c.limit, got, c.want)
		}
	}
}

// The waits of a mind that keeps failing: 1 s, doubling, capped at 5 min.
func ExampleNext() {
	var wait time.Duration
	for range 10 {
		wait = Next(wait, time.Second, 5*time.Minute)
		fmt.Print(wait, " ")
	}
	fmt.Println()
	// Output: 1s 2s 4s 8s 16s 32s 1m4s 2m8s 4m16s 5m0s
}
