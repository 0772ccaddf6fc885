package runner

import (
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/existence-loop/sdk/clock"
	"github.com/existence-loop/sdk/existence"
	"github.com/existence-loop/sdk/existence/budget"
	"github.com/existence-loop/sdk/store/memstore"
)

// namedTP is a tracer provider told apart from another by its name.
type namedTP struct {
	trace.TracerProvider
	name string
}

// st0 is the tests' start time.
var st0 = time.Date(2026, 4, 13, 12, 0, 0, 0, time.UTC)

// TestInherit pins Config's one rule: a zero field of the agent's
// Config takes the runner's value; a set one wins.
func TestInherit(t *testing.T) {
	runnerStore, agentStore := memstore.New(), memstore.New()
	runnerClock, agentClock := clock.NewVirtual(st0), clock.NewVirtual(st0)
	runnerLog, agentLog := slog.New(slog.DiscardHandler), slog.New(slog.DiscardHandler)
	runnerTP, agentTP := namedTP{noop.NewTracerProvider(), "runner"}, namedTP{noop.NewTracerProvider(), "agent"}
	rc := Config{
		Store: runnerStore, Clock: runnerClock, Heartbeat: time.Minute, Logger: runnerLog,
		Budget: budget.Budget{Tokens: 100, Window: time.Hour}, TracerProvider: runnerTP, TraceContent: true,
	}
	tests := []struct {
		name string
		cfg  existence.Config
		want existence.Config
	}{
		{"zero takes the runner's", existence.Config{},
			existence.Config{Store: runnerStore, Timing: existence.TimingConfig{Clock: runnerClock, Heartbeat: time.Minute}, Logger: runnerLog,
				Calls: existence.CallConfig{Budget: rc.Budget}, TracerProvider: runnerTP, TraceContent: true}},
		{"set wins", existence.Config{Store: agentStore, Timing: existence.TimingConfig{Clock: agentClock, Heartbeat: time.Second}, Logger: agentLog,
			Calls: existence.CallConfig{Budget: budget.Budget{Tokens: 5, Window: time.Minute}}, TracerProvider: agentTP},
			existence.Config{Store: agentStore, Timing: existence.TimingConfig{Clock: agentClock, Heartbeat: time.Second}, Logger: agentLog,
				Calls: existence.CallConfig{Budget: budget.Budget{Tokens: 5, Window: time.Minute}}, TracerProvider: agentTP, TraceContent: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := inherit(tt.cfg, &rc)
			assert.Same(t, tt.want.Store.(*memstore.Store), got.Store.(*memstore.Store), "Store")
			assert.Same(t, tt.want.Timing.Clock.(*clock.Virtual), got.Timing.Clock.(*clock.Virtual), "Clock")
			assert.Same(t, tt.want.Logger, got.Logger, "Logger")
			assert.Equal(t, tt.want.Timing.Heartbeat, got.Timing.Heartbeat, "Heartbeat")
			assert.Equal(t, tt.want.Calls.Budget, got.Calls.Budget, "Budget")
			assert.Equal(t, tt.want.TracerProvider, got.TracerProvider, "TracerProvider")
			assert.Equal(t, tt.want.TraceContent, got.TraceContent, "TraceContent")
		})
	}
}
