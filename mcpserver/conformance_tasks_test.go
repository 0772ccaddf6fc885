package mcpserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/internal/npmtest"
	"github.com/existence-loop/sdk/mcpserver"
	"github.com/existence-loop/sdk/task"
)

// fixtureQueue is a task.Queue whose tasks an imaginary agent "scout"
// claims at once and completes after the seconds its tool call asked for:
// the conformance tester's slow_compute, over the extension layer.
type fixtureQueue struct {
	mu    sync.Mutex
	tasks []task.Task
}

var _ task.Queue = (*fixtureQueue)(nil)

func (q *fixtureQueue) find(id string) (*task.Task, error) {
	for i := range q.tasks {
		if q.tasks[i].ID == id {
			return &q.tasks[i], nil
		}
	}
	return nil, fmt.Errorf("%w: %q", task.ErrNotFound, id)
}

// compute submits a task, claimed at once, that completes after d.
func (q *fixtureQueue) compute(description string, d time.Duration) task.Task {
	q.mu.Lock()
	defer q.mu.Unlock()
	now := time.Now().UTC()
	t := task.Task{ID: fmt.Sprintf("task-%06d", len(q.tasks)+1), Description: description, Status: task.Assigned,
		AssignedTo: "scout", Submitted: now, Assigned: now}
	q.tasks = append(q.tasks, t)
	time.AfterFunc(d, func() { _, _ = q.Finish(context.Background(), t.ID, true, "computed: "+description) })
	return t
}

func (q *fixtureQueue) Submit(context.Context, string, string) (task.Task, error) {
	return task.Task{}, task.ErrFull
}
func (q *fixtureQueue) Next(context.Context, string) (*task.Task, error) { return nil, nil }
func (q *fixtureQueue) Peek(context.Context, string) (*task.Task, error) { return nil, nil }
func (q *fixtureQueue) Expire(context.Context) ([]task.Task, error)      { return nil, nil }

func (q *fixtureQueue) Finish(_ context.Context, id string, ok bool, result string) (task.Task, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	t, err := q.find(id)
	if err != nil {
		return task.Task{}, err
	}
	if t.Status.Ended() {
		return *t, task.ErrEnded
	}
	t.Status, t.Ended, t.Result = task.Failed, time.Now().UTC(), result
	if ok {
		t.Status = task.Completed
	}
	return *t, nil
}

func (q *fixtureQueue) Cancel(_ context.Context, id, _ string) (task.Task, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	t, err := q.find(id)
	if err != nil {
		return task.Task{}, err
	}
	return *t, task.ErrNotPending // its tasks are claimed at once
}

func (q *fixtureQueue) Get(_ context.Context, id string) (task.Task, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	t, err := q.find(id)
	if err != nil {
		return task.Task{}, err
	}
	return *t, nil
}

func (q *fixtureQueue) List(context.Context) ([]task.Task, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	return append([]task.Task(nil), q.tasks...), nil
}

// TestConformanceTasksFixture runs the conformance tester's Tasks
// scenarios whose fixture tools are greet (sync) and slow_compute (a task
// that completes after its seconds) against a server that has them, built
// on the same extension layer as the agents' assign_task: the tester's
// checks of the wire format (flat task handles, field names, routing
// headers, capability negotiation, no requestState) pass. The scenarios
// that need tools this fixture cannot have (input_required, protocol
// errors) are not run.
func TestConformanceTasksFixture(t *testing.T) {
	tester := npmtest.Bin(t, "conformance")
	if testing.Short() {
		t.Skip("starts Node.js for each scenario")
	}
	f := newFixture(t)
	q := &fixtureQueue{}
	s, err := mcpserver.New(mcpserver.Config{Agents: f.rn, Tasks: q, Logger: quiet})
	require.NoError(t, err)
	type computeArgs struct {
		Seconds float64 `json:"seconds"`
		Label   string  `json:"label,omitempty"`
	}
	mcp.AddTool(s.MCP(), &mcp.Tool{Name: "greet", Description: "says hello"}, func(_ context.Context, _ *mcp.CallToolRequest, in struct {
		Name string `json:"name"`
	}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "Hello, " + in.Name + "!"}}}, nil, nil
	})
	mcp.AddTool(s.MCP(), &mcp.Tool{Name: "slow_compute", Description: "computes for seconds"}, func(_ context.Context, _ *mcp.CallToolRequest, in computeArgs) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "computed: " + in.Label}}}, nil, nil
	})
	s.AddTaskTool("slow_compute", func(_ context.Context, args json.RawMessage) (task.Task, error) {
		var in computeArgs
		if err := json.Unmarshal(args, &in); err != nil {
			return task.Task{}, mcpserver.Refusal(err)
		}
		return q.compute(in.Label, time.Duration(in.Seconds*float64(time.Second))), nil
	})
	hs := testerEndpoint(t, s)
	for _, scenario := range []string{"tasks-capability-negotiation", "tasks-request-headers", "tasks-wire-fields", "tasks-request-state-removal"} {
		t.Run(scenario, func(t *testing.T) {
			cmd := exec.CommandContext(t.Context(), tester, "server", "--url", hs.URL, "--scenario", scenario,
				"--spec-version", mcpserver.StatelessVersion, "--force", "-o", cmpOr(os.Getenv("CONFORMANCE_OUT"), t.TempDir()))
			cmd.Env = npmtest.Env()
			out, err := cmd.CombinedOutput()
			t.Logf("%s", out)
			require.NoError(t, err, "conformance server --scenario %s", scenario)
		})
	}
}
