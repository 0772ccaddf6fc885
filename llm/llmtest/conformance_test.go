package llmtest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/llm"
	"github.com/existence-loop/sdk/llm/ctxwindow"
	"github.com/existence-loop/sdk/llm/llmtest"
)

// inmem is an in-process reference implementation of the Script semantics,
// used to test Run itself without a network protocol. A non-empty bug
// breaks one behaviour on purpose.
type inmem struct {
	bug    string
	stream bool

	mu       sync.Mutex
	scripts  []llmtest.Script
	next     int
	recorded []llmtest.Recorded
}

func (m *inmem) Generate(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	start := time.Now()
	model := req.Model
	if model == "" {
		model = "inmem:1b"
	}
	raw, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	rec := llmtest.Recorded{
		Path: "/inmem", Model: model, Stream: m.stream, Messages: req.Messages,
		Format: req.Format, Tools: req.Tools, Temperature: req.Temperature,
		Seed: req.Seed, MaxTokens: ctxwindow.Reserve(req, 0, 0), Raw: raw,
	}
	if m.bug == "unbounded" {
		rec.MaxTokens = req.MaxTokens
	}
	if m.bug == "drop-zero-temperature" && rec.Temperature != nil && *rec.Temperature == 0 {
		rec.Temperature = nil
	}
	m.mu.Lock()
	m.recorded = append(m.recorded, rec)
	if m.next >= len(m.scripts) {
		m.mu.Unlock()
		return nil, llm.StatusError{Provider: "inmem", StatusCode: 500, Message: "no script left"}
	}
	s := m.scripts[m.next]
	m.next++
	m.mu.Unlock()

	if s.OnReceive != nil {
		s.OnReceive()
	}
	switch {
	case s.Hang || s.HangStream:
		if m.bug == "ignore-context" {
			return nil, fmt.Errorf("gave up")
		}
		<-ctx.Done()
		return nil, fmt.Errorf("inmem: %w", ctx.Err())
	case s.ModelMissing:
		return nil, &llm.ModelNotFoundError{Provider: "inmem", Model: model, Hint: "run `inmem pull " + model + "`"}
	case s.Status != 0:
		secs, _ := strconv.Atoi(s.RetryAfter)
		if m.bug == "no-retry-after" {
			secs = 0
		}
		return nil, llm.StatusError{Provider: "inmem", StatusCode: s.Status, Message: s.ErrorMessage, RetryAfter: time.Duration(secs) * time.Second}
	}
	resp := &llm.Response{
		Model: model, Text: s.Text, Thinking: s.Thinking, DoneReason: s.DoneReason,
		PromptTokens: s.PromptTokens, OutputTokens: s.OutputTokens,
	}
	if m.bug == "merge-thinking" && s.Thinking != "" {
		resp.Text = "<think>" + s.Thinking + "</think>" + s.Text
		resp.Thinking = ""
	}
	for i, tc := range s.ToolCalls {
		tc.ID = fmt.Sprintf("call_%d", i)
		resp.ToolCalls = append(resp.ToolCalls, tc)
	}
	if resp.DoneReason == "" {
		resp.DoneReason = llm.DoneStop
		if len(resp.ToolCalls) > 0 {
			resp.DoneReason = llm.DoneToolCalls
		}
	}
	resp.Duration = max(time.Since(start), time.Nanosecond)
	if resp.DoneReason == llm.DoneLength {
		return nil, &llm.TruncatedError{Response: resp}
	}
	if strings.TrimSpace(resp.Text) == "" && len(resp.ToolCalls) == 0 && m.bug != "empty-ok" {
		return nil, fmt.Errorf("inmem: %w", llm.ErrEmpty)
	}
	return resp, nil
}

func inmemHarness(bug string) llmtest.Harness {
	return llmtest.Harness{
		Name: "inmem",
		New: func(t *testing.T, stream bool, scripts ...llmtest.Script) (llm.Model, func() []llmtest.Recorded) {
			m := &inmem{bug: bug, stream: stream, scripts: scripts}
			return m, func() []llmtest.Recorded {
				m.mu.Lock()
				defer m.mu.Unlock()
				return append([]llmtest.Recorded(nil), m.recorded...)
			}
		},
		Unreachable: func(t *testing.T) llm.Model {
			return llmtest.Func(func(context.Context, *llm.Request) (*llm.Response, error) {
				return nil, &llm.UnavailableError{Provider: "inmem", URL: "inmem://", Hint: "start it", Err: fmt.Errorf("refused")}
			})
		},
	}
}

// TestRunReference runs the suite against the reference implementation: it
// must pass.
func TestRunReference(t *testing.T) {
	llmtest.Run(t, inmemHarness(""))
}

// TestRunCatchesBugs runs the suite in a child process against deliberately
// broken implementations and checks that exactly the expected cases fail.
func TestRunCatchesBugs(t *testing.T) {
	if testing.Short() {
		t.Skip("runs child test processes")
	}
	tests := []struct {
		bug      string
		failures []string
	}{
		{"merge-thinking", []string{"NoStream/Thinking", "Stream/Thinking"}},
		{"no-retry-after", []string{"NoStream/Status503RetryAfter", "Stream/Status429RetryAfter"}},
		{"empty-ok", []string{"NoStream/Empty/NoText", "Stream/Empty/ThinkingOnly"}},
		{"drop-zero-temperature", []string{"NoStream/ZeroOptions", "Stream/ZeroOptions"}},
		{"ignore-context", []string{"NoStream/Cancel", "Stream/Deadline", "Stream/HangStream"}},
		{"unbounded", []string{"NoStream/Text", "Stream/Text"}},
	}
	for _, tc := range tests {
		t.Run(tc.bug, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestRunBroken$", "-test.v")
			cmd.Env = append(os.Environ(), "LLMTEST_BUG="+tc.bug)
			out, err := cmd.CombinedOutput()
			require.Error(t, err, "the suite passed a broken implementation:\n%s", out)
			for _, f := range tc.failures {
				assert.Contains(t, string(out), "--- FAIL: TestRunBroken/"+f+" ", "output:\n%s", out)
			}
			if tc.bug != "unbounded" {
				assert.Contains(t, string(out), "--- PASS: TestRunBroken/NoStream/Text ", "unrelated cases still pass")
			} else {
				assert.Contains(t, string(out), "--- PASS: TestRunBroken/NoStream/Chunks ", "unrelated cases still pass")
			}
		})
	}
}

// TestRunBroken is the child process of TestRunCatchesBugs.
func TestRunBroken(t *testing.T) {
	bug := os.Getenv("LLMTEST_BUG")
	if bug == "" {
		t.Skip("child process of TestRunCatchesBugs")
	}
	llmtest.Run(t, inmemHarness(bug))
}
