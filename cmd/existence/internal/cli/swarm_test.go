package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/internal/pgtest"
	"github.com/existence-loop/sdk/llm/middleware"
	"github.com/existence-loop/sdk/store/filestore"
	"github.com/existence-loop/sdk/store/pgstore"
	"github.com/existence-loop/sdk/store/sqlitestore"
	"github.com/existence-loop/sdk/suffering"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSwarmFlags(t *testing.T) {
	o, err := parseSwarmFlags([]string{"-agents", "10000", "-model-latency", "2s", "-heartbeat", "6s", "-autonomy-workers", "16", "-duration", "60s", "-host-messages", "3", "-json"}, io.Discard)
	require.NoError(t, err)
	assert.Equal(t, swarmOptions{agents: 10000, latency: 2 * time.Second, jitter: 200 * time.Millisecond, heartbeat: 6 * time.Second, autonomyWorkers: 16, priorityWorkers: 1, duration: time.Minute, hostMessages: 3, store: "memory", seed: 1, json: true, provider: "ollama", replyTokens: 1000, llmTimeout: middleware.DefaultTimeout}, o)
	for _, bad := range [][]string{{"-agents", "0"}, {"-heartbeat", "0s"}, {"-model-latency", "1s", "-jitter", "2s"},
		{"-autonomy-workers", "-1"}, {"-model", "m"}, {"-llm-url", "standin:?slots=x"}, {"-llm-url", "standin:?color=red"}, {"-reply-tokens", "-5"},
		{"-llm-url", "http://h", "-provider", "openai"}, {"-token-budget", "4000"}, {"-llm-timeout", "0s"}, {"-llm-allow-redirect", ""}} {
		_, err := parseSwarmFlags(bad, io.Discard)
		assert.Error(t, err, "%v", bad)
	}
}

func TestSwarmStoreFlag(t *testing.T) {
	tests := []struct {
		args    []string
		kind    string // "" = refused
		wantErr string
	}{
		{nil, "memory", ""},
		{[]string{"-store", "memory"}, "memory", ""},
		{[]string{"-store", "/tmp/agents"}, "dir", ""},
		{[]string{"-store", "sqlite:/tmp/swarm.db"}, "sqlite", ""},
		{[]string{"-store", "postgres://u@localhost:5432/swarm"}, "postgres", ""},
		{[]string{"-store", "postgresql://u@localhost/swarm", "-max-agents", "500"}, "postgres", ""},
		{[]string{"-store", "sqlite:"}, "", "has no path"},
		{[]string{"-store", ""}, "", "empty"},
		{[]string{"-store", "mysql://u@localhost/swarm"}, "", "unknown scheme"},
		{[]string{"-store", "sqlite:x.db", "-max-agents", "5"}, "", "postgres://... only"},
		{[]string{"-store", "postgres://localhost/swarm", "-max-agents", "-1"}, "", "-max-agents must be"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			o, err := parseSwarmFlags(tt.args, io.Discard)
			if tt.kind == "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.wantErr)
				return
			}
			require.NoError(t, err)
			kind, err := swarmStoreKind(o.store)
			require.NoError(t, err)
			assert.Equal(t, tt.kind, kind)
		})
	}
	var help bytes.Buffer
	_, err := parseSwarmFlags([]string{"-h"}, &help)
	require.ErrorIs(t, err, flag.ErrHelp)
	assert.Contains(t, help.String(), "share one population")
}

// shortSwarm returns the options of a short run of 20 agents on a fast
// fake model, on the given store.
func shortSwarm(t *testing.T, store string) swarmOptions {
	t.Helper()
	o, err := parseSwarmFlags([]string{"-agents", "20", "-model-latency", "5ms", "-jitter", "0s", "-heartbeat", "50ms", "-autonomy-workers", "4", "-duration", "2s", "-host-messages", "1", "-store", store}, io.Discard)
	require.NoError(t, err)
	return o
}

// TestDurableStores runs the swarm briefly on a directory and on SQLite
// and checks every agent is stored afterwards.
func TestSwarmDurableStores(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		spec, kind string
		list       func(t *testing.T) []string
	}{
		{filepath.Join(dir, "agents"), "dir", func(t *testing.T) []string {
			fs, err := filestore.Open(filepath.Join(dir, "agents"), filestore.Options{})
			require.NoError(t, err)
			ids, err := fs.List(context.Background())
			require.NoError(t, err)
			return ids
		}},
		{"sqlite:" + filepath.Join(dir, "swarm.db"), "sqlite", func(t *testing.T) []string {
			s, err := sqlitestore.Open(context.Background(), filepath.Join(dir, "swarm.db"), sqlitestore.Options{})
			require.NoError(t, err)
			defer s.Close()
			ids, err := s.List(context.Background())
			require.NoError(t, err)
			return ids
		}},
	}
	for _, tt := range tests {
		t.Run(tt.kind, func(t *testing.T) {
			res, err := runSwarm(context.Background(), shortSwarm(t, tt.spec))
			require.NoError(t, err)
			assert.Equal(t, tt.kind, res.Store)
			assert.Positive(t, res.Cycles)
			assert.Positive(t, res.Saves)
			assert.Zero(t, res.SaveErrors)
			assert.GreaterOrEqual(t, res.FinalSaves, int64(20), "every agent is saved at the stop")
			assert.Zero(t, res.Errors, res.FirstError)
			ids := tt.list(t)
			assert.Len(t, ids, 20)
			assert.Contains(t, ids, "agent-00019")
		})
	}
}

// TestPostgres runs the swarm briefly on a real PostgreSQL server: the
// agents are enrolled and leased, their states saved, and every lease
// released at the stop.
func TestSwarmPostgres(t *testing.T) {
	url := pgtest.New(t)
	res, err := runSwarm(context.Background(), shortSwarm(t, url))
	require.NoError(t, err)
	assert.Equal(t, "postgres", res.Store)
	assert.EqualValues(t, 20, res.LeasesClaimed)
	assert.EqualValues(t, 20, res.LeasesReleased)
	assert.Zero(t, res.LeasesLost)
	assert.Equal(t, 20, res.AgentsHeldMax)
	assert.Positive(t, res.Cycles)
	assert.Zero(t, res.SaveErrors)
	assert.Zero(t, res.Errors, res.FirstError)

	// What the store did: saves per second, group commits, round trips
	// per cycle, leases renewed, late and lost, the lease margin; printed
	// and under "postgres" in -json.
	f := res.Postgres
	require.NotNil(t, f)
	assert.Positive(t, f.SavesPerS)
	assert.Positive(t, f.Batches)
	assert.GreaterOrEqual(t, f.BatchMean, 1.0)
	assert.Positive(t, f.RoundTripsPerCycle)
	assert.Zero(t, f.LeasesLost)
	assert.Zero(t, f.SavesFenced)
	assert.EqualValues(t, pgstore.DefaultTTL.Milliseconds(), f.TTLMs)

	var text bytes.Buffer
	require.NoError(t, res.print(&text, false))
	assert.Contains(t, text.String(), "group commits")
	assert.Contains(t, text.String(), "time left at renewal p1")
	var js bytes.Buffer
	require.NoError(t, res.print(&js, true))
	var m map[string]any
	require.NoError(t, json.Unmarshal(js.Bytes(), &m))
	pg, ok := m["postgres"].(map[string]any)
	require.True(t, ok, "a postgres object in -json")
	for _, k := range []string{"saves_per_s", "batch_mean", "batch_p99", "round_trips_per_cycle", "leases_renewed", "leases_late", "leases_lost", "lease_margin_p1_ms"} {
		assert.Contains(t, pg, k)
	}

	ctx := context.Background()
	s, err := pgstore.Open(ctx, url, pgstore.Options{Owner: "checker"})
	require.NoError(t, err)
	defer s.Close()
	ids, err := s.List(ctx)
	require.NoError(t, err)
	assert.Len(t, ids, 20, "every agent's state saved")
	ls, err := s.Leases(ctx)
	require.NoError(t, err)
	require.Len(t, ls, 20)
	for _, l := range ls {
		assert.False(t, l.Live, "%s still leased by %s", l.AgentID, l.Owner)
		assert.EqualValues(t, 1, l.Epoch, "%s claimed once", l.AgentID)
		assert.False(t, l.Saved.IsZero(), "%s saved", l.AgentID)
	}
}

func TestSwarmJSONKeys(t *testing.T) {
	o, err := parseSwarmFlags([]string{"-agents", "20", "-model-latency", "10ms", "-jitter", "0s", "-heartbeat", "50ms", "-autonomy-workers", "4", "-duration", "500ms", "-host-messages", "2", "-json"}, io.Discard)
	require.NoError(t, err)
	res, err := runSwarm(context.Background(), o)
	require.NoError(t, err)
	var buf bytes.Buffer
	require.NoError(t, res.print(&buf, true))
	var m map[string]any
	require.NoError(t, json.Unmarshal(buf.Bytes(), &m))
	for _, k := range []string{"agents", "cycles", "cycles_per_s", "model_calls", "coalesced", "lateness_ms", "rss_bytes_per_agent", "goroutines_max", "host_reply_ms"} {
		assert.Contains(t, m, k)
	}
	lat := m["lateness_ms"].(map[string]any)
	for _, lane := range []string{"autonomy", "priority"} {
		q := lat[lane].(map[string]any)
		for _, k := range []string{"p50", "p99", "max"} {
			assert.Contains(t, q, k)
		}
	}
	assert.EqualValues(t, 20, m["agents"])
	assert.Positive(t, m["cycles"])
	assert.GreaterOrEqual(t, m["model_calls"], m["cycles"])
	buf.Reset()
	require.NoError(t, res.print(&buf, false))
	assert.Contains(t, buf.String(), "lateness autonomy")
}

// BenchmarkSwarm runs the swarm harness at 1,000 agents for 3 s (a 600 ms
// heartbeat and a 200 ms model, both 10× faster than the 6 s and 2 s of the
// scale target, with enough workers for the load), and reports its figures.
func BenchmarkSwarm(b *testing.B) {
	o := swarmOptions{agents: 1000, latency: 200 * time.Millisecond, jitter: 20 * time.Millisecond, heartbeat: 600 * time.Millisecond, autonomyWorkers: 400, priorityWorkers: 1, duration: 3 * time.Second, hostMessages: 5, store: "memory", seed: 1}
	for b.Loop() {
		res, err := runSwarm(context.Background(), o)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(res.CyclesPerS, "cycles/s")
		b.ReportMetric(res.Lateness["autonomy"].P99, "lateness-p99-ms")
		b.ReportMetric(float64(res.RSSBytesPerAgent), "rss-B/agent")
		b.ReportMetric(float64(res.GoroutinesMax), "goroutines")
		b.ReportMetric(float64(res.CallsInFlightMax), "calls-in-flight")
		if res.HostReply != nil {
			b.ReportMetric(res.HostReply.Max, "host-reply-max-ms")
		}
	}
}

func TestOutOfOrder(t *testing.T) {
	t0 := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	tests := []struct {
		name string
		sd   []startDue
		want int64
	}{
		{"in order", []startDue{{at(10), at(0)}, {at(20), at(5)}, {at(30), at(30)}}, 0},
		{"listed out of start order", []startDue{{at(30), at(30)}, {at(10), at(0)}}, 0},
		{"within the tolerance", []startDue{{at(10), at(200)}, {at(20), at(150)}}, 0},
		{"one inversion", []startDue{{at(10), at(500)}, {at(20), at(100)}, {at(30), at(600)}}, 1},
		{"two after the same late one", []startDue{{at(10), at(900)}, {at(20), at(100)}, {at(30), at(200)}}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, outOfOrder(tt.sd))
		})
	}
}

// TestSeasonedState: a seasoned agent is valid and has every list at its
// cap, so loading it cuts nothing.
func TestSeasonedState(t *testing.T) {
	st := seasonedState("agent-00001", "Agent 1", time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC))
	require.NoError(t, st.Validate())
	l := identity.DefaultLimits()
	id := st.Identity
	assert.Len(t, id.Goals, l.Goals)
	assert.Len(t, id.Opinions, l.Opinions)
	assert.Len(t, id.Questions, l.Questions)
	assert.Len(t, id.Discoveries, l.Discoveries)
	assert.Len(t, st.Suffering.Resolved, suffering.MaxResolved)
	assert.Equal(t, l.NarrativeKept, len(id.Narrative))
	assert.Empty(t, st.Identity.Enforce(l), "within its caps")
	assert.Empty(t, st.Suffering.Enforce(time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)), "within its caps")
}

// TestSeasonedRun: with -seasoned the agents start from their seasoned
// states (in a directory store, where they can be read back) and keep
// their lists at the caps while they cycle; -gc-samples is reported.
func TestSeasonedRun(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "agents")
	o := shortSwarm(t, dir)
	o.seasoned, o.gcSamples = true, true
	res, err := runSwarm(context.Background(), o)
	require.NoError(t, err)
	assert.True(t, res.Seasoned)
	assert.True(t, res.GCSamples)
	assert.Positive(t, res.Cycles)
	assert.Zero(t, res.Errors, res.FirstError)
	fs, err := filestore.Open(dir, filestore.Options{})
	require.NoError(t, err)
	st, err := fs.Load(context.Background(), "agent-00003")
	require.NoError(t, err)
	assert.Len(t, st.Identity.Goals, identity.DefaultLimits().Goals, "at the cap")
	assert.Contains(t, st.Identity.Goals[0].Objective, "Agent 3, goal ", "the seasoned history, carried on")
	_, err = parseSwarmFlags([]string{"-seasoned", "-store", "postgres://u@localhost/swarm"}, io.Discard)
	require.ErrorContains(t, err, "-seasoned applies to")
}

// TestSwarmAgainstAStandin: the swarm drives the stand-in server over
// loopback with an adaptive autonomy lane and reports what the server and
// the SDK saw: tokens by the server's counts, the limit by second, the
// stand-in's counters.
func TestSwarmAgainstAStandin(t *testing.T) {
	o, err := parseSwarmFlags([]string{"-agents", "30", "-heartbeat", "200ms", "-duration", "2s", "-llm-url", "standin:?slots=2&queue=2&latency=20ms",
		"-host-messages", "2", "-token-budget", "100000/1m"}, io.Discard)
	require.NoError(t, err)
	res, err := runSwarm(context.Background(), o)
	require.NoError(t, err)
	require.NotNil(t, res.Server)
	st := res.Server.Standin
	require.NotNil(t, st)
	assert.Equal(t, 2, st.Slots)
	assert.Positive(t, st.Requests)
	assert.LessOrEqual(t, st.MaxInFlight, 2)
	assert.True(t, res.Concurrency.Adaptive)
	assert.NotEmpty(t, res.LimitBySecond)
	assert.Positive(t, res.Tokens.Input)
	assert.Positive(t, res.Tokens.Output)
	assert.Zero(t, res.Tokens.Estimated, "the stand-in reports its counts")
	assert.Positive(t, res.Cycles)
	assert.Equal(t, "100000/1m0s", res.TokenBudget)
	assert.Equal(t, int64(st.Busy), res.Concurrency.Overloads, "every 503 the server sent, the SDK saw")
	var out bytes.Buffer
	require.NoError(t, res.print(&out, false))
	assert.Contains(t, out.String(), "stand-in: 2 slots, a queue of 2, 20 ms a call")
	assert.Contains(t, out.String(), "concurrency   adaptive: limit")
	out.Reset()
	require.NoError(t, res.print(&out, true))
	var m map[string]any
	require.NoError(t, json.Unmarshal(out.Bytes(), &m))
	for _, k := range []string{"server", "tokens", "concurrency", "concurrency_limit_by_s", "overload_rate", "host_reply_ms"} {
		assert.Contains(t, m, k)
	}
}

// TestSwarmOverAPoolWithTheCacheLayout: two -llm-url make a pool, which
// the report shows server by server; -prompt-layout cache against
// stand-ins keeping prompts' KV cache reports the cycle prompts' cached
// share.
func TestSwarmOverAPoolWithTheCacheLayout(t *testing.T) {
	o, err := parseSwarmFlags([]string{"-agents", "20", "-heartbeat", "200ms", "-duration", "2s", "-prompt-layout", "cache",
		"-llm-url", "standin:?slots=2&latency=20ms&cache=2", "-llm-url", "standin:?slots=2&latency=20ms&cache=2"}, io.Discard)
	require.NoError(t, err)
	res, err := runSwarm(context.Background(), o)
	require.NoError(t, err)
	require.Len(t, res.Servers, 2)
	for _, s := range res.Servers {
		require.NotNil(t, s.Pool)
		assert.Positive(t, s.Pool.Calls, s.URL)
		assert.Zero(t, s.Pool.Downs, s.URL)
		assert.Positive(t, s.Pool.PromptTokens, s.URL)
		assert.Positive(t, s.Pool.OutputTokens, s.URL)
		require.NotNil(t, s.Standin)
		assert.Equal(t, "cache", s.Standin.Layout)
		assert.Positive(t, s.Standin.CycleCachedShare, s.URL)
	}
	var out bytes.Buffer
	require.NoError(t, res.print(&out, false))
	assert.Contains(t, out.String(), "pool server   "+res.Servers[1].URL)
	_, err = parseSwarmFlags([]string{"-prompt-layout", "fast"}, io.Discard)
	assert.Error(t, err)
}
