package a2aserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/a2aserver"
	"github.com/existence-loop/sdk/existence"
	"github.com/existence-loop/sdk/existence/runner"
	"github.com/existence-loop/sdk/hostaccess"
	"github.com/existence-loop/sdk/store/memstore"
	"github.com/existence-loop/sdk/store/taskqueue"
)

// BenchmarkSendMessage1000Agents is the acceptance latency of A2A
// SendMessage against a swarm of 1,000 running agents in memory (a
// memstore, a task queue in memory, a model that answers at once): b.N
// JSON-RPC calls over loopback HTTP, one after another, each to the next
// agent by tenant, timed from the request to the answer (the task
// accepted, TASK_STATE_SUBMITTED). It reports the p50 and p99 in
// milliseconds. docs/performance.md has the figures:
//
//	go test ./a2aserver -run '^$' -bench SendMessage1000Agents -benchtime 1000x
func BenchmarkSendMessage1000Agents(b *testing.B) {
	const agents = 1000
	tasks := taskqueue.NewMemory(taskqueue.Options{MaxTasks: 10 * agents})
	rn, err := runner.New(runner.Config{Store: memstore.New(), Heartbeat: 6 * time.Second, Logger: quiet})
	require.NoError(b, err)
	ctx, cancel := context.WithCancel(context.Background())
	for i := range agents {
		_, err := rn.Add(ctx, existence.Config{ID: fmt.Sprintf("agent-%05d", i), Name: "Agent", Model: goalModel(), Tasks: tasks, Executor: done})
		require.NoError(b, err)
	}
	ran := make(chan error, 1)
	go func() { ran <- rn.Run(ctx) }()
	defer func() {
		cancel()
		<-ran
		rn.Close()
	}()
	s, err := a2aserver.New(a2aserver.Config{Agents: rn, Tasks: tasks, Logger: quiet})
	require.NoError(b, err)
	mux := http.NewServeMux()
	s.Mount(mux, hostaccess.NewAuth(hostaccess.AuthConfig{Token: token}))
	srv := httptest.NewServer(mux)
	defer srv.Close()
	client := srv.Client()

	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		body, _ := json.Marshal(rpc("SendMessage", fmt.Sprintf("agent-%05d", i%agents), message(fmt.Sprintf("task %d: summarise the notes", i))))
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/a2a", bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		start := time.Now()
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		out, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		lat = append(lat, time.Since(start))
		if resp.StatusCode != http.StatusOK || !bytes.Contains(out, []byte("TASK_STATE_SUBMITTED")) {
			b.Fatalf("%d: %s", resp.StatusCode, out)
		}
	}
	b.StopTimer()
	slices.Sort(lat)
	q := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))].Microseconds()) / 1000 }
	b.ReportMetric(q(0.50), "p50-ms")
	b.ReportMetric(q(0.99), "p99-ms")
	b.ReportMetric(float64(lat[len(lat)-1].Microseconds())/1000, "max-ms")
}
