package middleware_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/llm"
	"github.com/existence-loop/sdk/llm/llmtest"
	"github.com/existence-loop/sdk/llm/middleware"
)

// serverSim is a model server in virtual time: slots serving one call
// each for service, and a FIFO queue of at most queue calls; a call
// beyond is refused at once (503). A closed-loop client keeps as many
// calls in flight as the limit says.
type serverSim struct {
	slots, queue int
	service      time.Duration
	now          time.Time
	busyUntil    []time.Time // per slot
}

// admit returns when a call arriving now finishes, or false for a 503.
func (s *serverSim) admit(inFlightAtServer int) (time.Time, bool) {
	if inFlightAtServer > s.slots+s.queue {
		return time.Time{}, false
	}
	// The earliest free slot serves it.
	best := 0
	for i, t := range s.busyUntil {
		if t.Before(s.busyUntil[best]) {
			best = i
		}
	}
	start := s.now
	if s.busyUntil[best].After(start) {
		start = s.busyUntil[best]
	}
	end := start.Add(s.service)
	s.busyUntil[best] = end
	return end, true
}

type simCall struct {
	start, end time.Time
	inFlight   int
}

// runSim drives l against the simulated server for d of virtual time and
// returns the limits seen at each second, the 503s and the slot
// utilisation.
func runSim(t *testing.T, l *middleware.AdaptiveLimit, s *serverSim, d time.Duration) (limits []int, refused, calls int, util float64) {
	t.Helper()
	s.now = time.Unix(0, 0)
	s.busyUntil = make([]time.Time, s.slots)
	for i := range s.busyUntil {
		s.busyUntil[i] = s.now
	}
	end := s.now.Add(d)
	var inflight []simCall
	var busy time.Duration
	nextSecond := s.now
	for s.now.Before(end) {
		// Fill up to the limit.
		for len(inflight) < l.Limit() {
			n := l.Begin()
			fin, ok := s.admit(len(inflight) + 1)
			calls++
			if !ok {
				refused++
				l.Record(s.now.Add(time.Millisecond), middleware.Sample{RTT: time.Millisecond, InFlight: n, Overload: true})
				break // the client retries after the next completion
			}
			busy += s.service
			inflight = append(inflight, simCall{start: s.now, end: fin, inFlight: n})
		}
		// Advance to the next completion.
		first := 0
		for i, c := range inflight {
			if c.end.Before(inflight[first].end) {
				first = i
			}
		}
		c := inflight[first]
		inflight = append(inflight[:first], inflight[first+1:]...)
		s.now = c.end
		l.Record(s.now, middleware.Sample{RTT: c.end.Sub(c.start), InFlight: c.inFlight})
		for !nextSecond.After(s.now) {
			limits = append(limits, l.Limit())
			nextSecond = nextSecond.Add(time.Second)
		}
	}
	return limits, refused, calls, float64(busy) / float64(time.Duration(s.slots)*d)
}

func TestAdaptiveLimitFindsTheServersCapacity(t *testing.T) {
	for _, slots := range []int{1, 4, 16} {
		t.Run(fmt.Sprintf("%d slots", slots), func(t *testing.T) {
			l := middleware.NewAdaptiveLimit(middleware.AdaptiveConfig{})
			limits, refused, calls, util := runSim(t, l, &serverSim{slots: slots, queue: 4, service: 500 * time.Millisecond}, 5*time.Minute)
			steady := limits[len(limits)/2:]
			t.Logf("limits by second: %v; refused %d of %d; utilisation %.3f", limits[:40], refused, calls, util)
			for _, lim := range steady {
				assert.GreaterOrEqual(t, lim, slots+1, "a queue keeps the slots busy")
				assert.LessOrEqual(t, lim, slots+3, "the queue stays short and under the server's bound")
			}
			assert.Less(t, float64(refused)/float64(calls), 0.02, "fewer than 2%% of calls refused (%d of %d)", refused, calls)
			assert.Greater(t, util, 0.95)
			st := l.Stats()
			assert.InDelta(t, 500*time.Millisecond, st.MinRTT, float64(time.Millisecond))
			assert.Equal(t, int64(refused), st.Overloads)
		})
	}
}

func TestAdaptiveLimitCutsOnOverload(t *testing.T) {
	var changes []int
	l := middleware.NewAdaptiveLimit(middleware.AdaptiveConfig{Initial: 16, OnChange: func(n int) { changes = append(changes, n) }})
	now := time.Unix(0, 0)
	n := l.Begin()
	assert.Equal(t, 12, l.Record(now, middleware.Sample{RTT: time.Millisecond, InFlight: n, Overload: true}), "cut by a quarter")
	// Before any no-load latency is known, every overload cuts.
	n = l.Begin()
	assert.Equal(t, 9, l.Record(now, middleware.Sample{RTT: time.Millisecond, InFlight: n, Overload: true}))
	assert.Equal(t, []int{12, 9}, changes)
	st := l.Stats()
	assert.Equal(t, int64(2), st.Overloads)
	assert.Equal(t, int64(2), st.Cuts)
	assert.False(t, st.SlowStart)
	assert.Zero(t, st.InFlight)

	// An ignored sample only leaves the calls in flight.
	l.Begin()
	assert.Equal(t, 9, l.Record(now, middleware.Sample{Ignore: true}))
	assert.Equal(t, int64(2), l.Stats().Samples)
}

func TestAdaptiveLimitHoldsWhenTheDemandIsTheBound(t *testing.T) {
	l := middleware.NewAdaptiveLimit(middleware.AdaptiveConfig{Initial: 8})
	now := time.Unix(0, 0)
	// Calls one at a time, never queued: the server is idle, not the
	// bound. Slow start ends at the first window that was not busy.
	for range 50 {
		l.Begin()
		now = now.Add(time.Second)
		l.Record(now, middleware.Sample{RTT: time.Second, InFlight: 1})
	}
	assert.Equal(t, 8, l.Limit(), "held: a single call in flight proves nothing")
}

func TestAdaptiveLimitBounds(t *testing.T) {
	l := middleware.NewAdaptiveLimit(middleware.AdaptiveConfig{Min: 2, Max: 3, Initial: 10})
	assert.Equal(t, 3, l.Limit())
	l = middleware.NewAdaptiveLimit(middleware.AdaptiveConfig{Min: 2})
	assert.Equal(t, 2, l.Limit())
	n := l.Begin()
	assert.Equal(t, 2, l.Record(time.Unix(0, 0), middleware.Sample{InFlight: n, Overload: true}), "never below Min")
}

func TestOverloaded(t *testing.T) {
	tests := []struct {
		err  error
		want bool
	}{
		{nil, false},
		{llm.StatusError{Provider: "ollama", StatusCode: 503}, true},
		{fmt.Errorf("wrapped: %w", llm.StatusError{Provider: "openai", StatusCode: 429}), true},
		{llm.StatusError{Provider: "ollama", StatusCode: 500}, false},
		{errors.New("ollama: " + llmtest.BusyMessage), true},
		{errors.New("Too Many Requests"), true},
		{context.Canceled, false},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, middleware.Overloaded(tt.err), "%v", tt.err)
	}
}

func TestAdaptiveObserve(t *testing.T) {
	l := middleware.NewAdaptiveLimit(middleware.AdaptiveConfig{})
	clock := time.Unix(0, 0)
	now := func() time.Time { clock = clock.Add(100 * time.Millisecond); return clock }
	fake := llmtest.NewFake(
		llmtest.Reply{Text: "ok"},
		llmtest.Reply{Err: llm.StatusError{Provider: "ollama", StatusCode: 503, Message: llmtest.BusyMessage}},
	)
	m := l.Observe(fake, now)
	_, err := m.Generate(context.Background(), &llm.Request{})
	require.NoError(t, err)
	_, err = m.Generate(context.Background(), &llm.Request{})
	require.Error(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = m.Generate(ctx, &llm.Request{})
	require.Error(t, err)
	st := l.Stats()
	assert.Equal(t, int64(2), st.Samples, "the cancelled call is not a sample")
	assert.Equal(t, int64(1), st.Overloads)
	assert.Zero(t, st.InFlight)
	assert.Same(t, fake, m.(llm.Unwrapper).Unwrap())
}
