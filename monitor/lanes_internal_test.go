package monitor

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestPercentile(t *testing.T) {
	s := func(n ...int) []time.Duration {
		out := make([]time.Duration, len(n))
		for i, v := range n {
			out[i] = time.Duration(v) * time.Second
		}
		return out
	}
	hundred := make([]int, 100)
	for i := range hundred {
		hundred[i] = i + 1
	}
	for _, tt := range []struct {
		name   string
		sorted []time.Duration
		q      float64
		want   time.Duration
	}{
		{"none", nil, 0.5, 0},
		{"one", s(7), 0.99, 7 * time.Second},
		{"median of four is the second", s(1, 2, 3, 4), 0.5, 2 * time.Second},
		{"p99 of 100 is the 99th", s(hundred...), 0.99, 99 * time.Second},
		{"p50 of 100 is the 50th", s(hundred...), 0.5, 50 * time.Second},
		{"p99 of three is the largest", s(1, 2, 3), 0.99, 3 * time.Second},
	} {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, percentile(tt.sorted, tt.q), "percentile(%v, %v)", tt.sorted, tt.q)
		})
	}
}
