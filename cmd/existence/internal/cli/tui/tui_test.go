package tui_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/exp/teatest"
	"github.com/muesli/termenv"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/cmd/existence/internal/cli/tui"
	"github.com/existence-loop/sdk/existence"
	"github.com/existence-loop/sdk/existence/event"
	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/slot"
)

// childEnv makes the test binary run the view on its terminal (for the tmux
// test) instead of the tests.
const childEnv = "TUI_TEST_CHILD"

func TestMain(m *testing.M) {
	lipgloss.SetColorProfile(termenv.Ascii) // golden frames without colour codes
	if os.Getenv(childEnv) != "" {
		lipgloss.SetColorProfile(termenv.ANSI256)
		os.Exit(child())
	}
	os.Exit(m.Run())
}

var at = time.Date(2026, 11, 23, 9, 30, 0, 0, time.UTC)

// statuses are the trio as the panes show them.
func statuses() []existence.Status {
	return []existence.Status{
		{ID: "scout", Name: "Cedar", Goal: "map the workspace and write scout/index.md listing every file with its first line", Load: 0.62, Level: "constrained",
			Stressors: []existence.StressorStatus{{Type: "invisibility", Severity: 0.42}, {Type: "futility", Severity: 0.2}}, Cycles: 4},
		{ID: "analyst", Name: "Cipher", Goal: "review builder/pump.md", Load: 0.1, Level: "none", Cycles: 3},
		{ID: "builder", Name: "Vault", Load: 0.93, Level: "crisis", ConsecutiveFallbacks: 2, LastFallbackCause: "unavailable",
			Stressors: []existence.StressorStatus{{Type: "repeated_failure", Severity: 0.6}, {Type: "isolation", Severity: 0.33}}},
	}
}

// withSlots are the trio with slots on two boards: most important first,
// one stale, one failed.
func withSlots() []existence.Status {
	ss := statuses()
	ss[0].Slots = []existence.SlotStatus{
		{Slot: slot.Slot{ID: "backup", Title: "Backup", Status: slot.Failed, Summary: "disk full", Importance: 0.9}},
		{Slot: slot.Slot{ID: "weather", Title: "Weather", Status: slot.Completed, Summary: "storm at 15:00, wind from the west", Importance: 0.8}},
		{Slot: slot.Slot{ID: "news", Title: "News", Status: slot.Pending, Importance: 0.3, NextRun: 1800}, Stale: true},
		{Slot: slot.Slot{ID: "more", Title: "More", Status: slot.Idle}},
	}
	ss[2].Slots = []existence.SlotStatus{{Slot: slot.Slot{ID: "workspace", Title: "Workspace", Status: "changed", Summary: "created builder/pump.md"}}}
	return ss
}

// recorder is a Handle that records lines and answers like the trio.
type recorder struct {
	mu    sync.Mutex
	lines []string
}

func (r *recorder) handle(_ context.Context, line string, w io.Writer) {
	r.mu.Lock()
	r.lines = append(r.lines, line)
	r.mu.Unlock()
	fmt.Fprintf(w, "handled: %s\n", line)
}

func TestGoldenFrame(t *testing.T) {
	rec := &recorder{}
	m := tui.New(context.Background(), tui.Config{Title: "existence-loop trio", Statuses: statuses, Handle: rec.handle})
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(110, 24))
	for _, e := range []event.Event{
		{Kind: event.GoalChosen, Time: at, Agent: "Cedar", Text: "map the workspace", Reasoning: "I know nothing yet"},
		{Kind: event.Cycle, Time: at, Agent: "Cedar", Cycle: &event.CycleStats{}}, // not a thought
		{Kind: event.Fallback, Time: at, Agent: "Vault", FailureClass: "unavailable", Error: "cannot reach Ollama"},
		{Kind: event.GoalEnded, Time: at, Agent: "Cipher", GoalStatus: identity.Done, Text: strings.Repeat("a long outcome ", 20)},
	} {
		tm.Send(tui.EventMsg(e))
	}
	tm.Type("@cedar look at design/")
	tm.Send(tea.KeyMsg{Type: tea.KeyEnter})
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte("handled: @cedar look at design/")) },
		teatest.WithDuration(10*time.Second), teatest.WithCheckInterval(10*time.Millisecond))
	tm.Type("/appr")
	tm.Send(tea.KeyMsg{Type: tea.KeyBackspace})
	require.NoError(t, tm.Quit())
	final := tm.FinalModel(t, teatest.WithFinalTimeout(10*time.Second)).(*tui.Model)
	assert.Equal(t, []string{"@cedar look at design/"}, rec.lines)
	teatest.RequireEqualOutput(t, []byte(final.View()))
}

// TestGoldenFrameWithSlots: each pane lists its agent's slots (at most
// three, most important first), and every pane keeps the same height.
func TestGoldenFrameWithSlots(t *testing.T) {
	m := tui.New(context.Background(), tui.Config{Title: "existence-loop trio", Statuses: withSlots})
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(110, 24))
	tm.Send(tui.EventMsg(event.Event{Kind: event.Slot, Time: at, Agent: "Vault",
		Slot: &slot.Slot{ID: "workspace", Title: "Workspace", Status: "changed", Summary: "created builder/pump.md"}}))
	require.NoError(t, tm.Quit())
	final := tm.FinalModel(t, teatest.WithFinalTimeout(10*time.Second)).(*tui.Model)
	view := final.View()
	assert.Contains(t, view, "• Backup: failed - disk full")
	assert.Contains(t, view, "• News: pending (stale)")
	assert.NotContains(t, view, "More: idle", "three slots at most")
	assert.Contains(t, view, "Vault 📌 Workspace: changed - created builder/pump.md", "the slot event in the thoughts")
	teatest.RequireEqualOutput(t, []byte(view))
}

func TestEscQuits(t *testing.T) {
	m := tui.New(context.Background(), tui.Config{Title: "t", Statuses: statuses})
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(80, 20))
	tm.Send(tea.KeyMsg{Type: tea.KeyEsc})
	tm.WaitFinished(t, teatest.WithFinalTimeout(10*time.Second))
}

// child runs the view on the terminal until the person quits; typed lines
// are echoed as "handled: …".
func child() int {
	rec := &recorder{}
	err := tui.Run(context.Background(), tui.Config{Title: "existence-loop trio", Statuses: withSlots, Handle: rec.handle}, os.Stdin, os.Stdout, make(chan event.Event))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// TestUnderTmux runs the view in a real terminal (tmux), types a host
// message and quits, as a person would.
func TestUnderTmux(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux not found: install it with `apt-get install tmux`")
	}
	bin, err := os.Executable()
	require.NoError(t, err)
	sock := "tui-test-" + fmt.Sprint(os.Getpid())
	tmux := func(args ...string) string {
		out, err := exec.Command("tmux", append([]string{"-L", sock}, args...)...).CombinedOutput()
		require.NoError(t, err, "tmux %v: %s", args, out)
		return string(out)
	}
	tmux("-f", "/dev/null", "new-session", "-d", "-s", "tui", "-x", "120", "-y", "30", "env", childEnv+"=1", "TERM=xterm-256color", bin)
	t.Cleanup(func() { _ = exec.Command("tmux", "-L", sock, "kill-server").Run() })
	tmux("set-option", "-g", "status", "off")

	screen := func() string { return tmux("capture-pane", "-p", "-t", "tui") }
	waitFor := func(want string) string {
		t.Helper()
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		deadline := time.After(20 * time.Second)
		for {
			s := screen()
			if strings.Contains(s, want) {
				return s
			}
			select {
			case <-tick.C:
			case <-deadline:
				t.Fatalf("the screen never showed %q:\n%s", want, s)
			}
		}
	}
	// The window may first be drawn at tmux's default size and redrawn
	// when the 120-column size arrives: wait for the wide layout.
	waitFor("> █")
	s := waitFor("• Workspace: changed - created buil")
	for _, want := range []string{"Cedar (scout)", "Cipher (analyst)", "Vault (builder)", "0.93 crisis", "0.42 invisibility", "⚠ 2 fallback(s): unavailable",
		"• Backup: failed - disk full", "• Workspace: changed - created buil", "• News: pending (stale)"} {
		assert.Contains(t, s, want)
	}
	tmux("send-keys", "-t", "tui", "-l", "@cedar hello")
	tmux("send-keys", "-t", "tui", "Enter")
	waitFor("handled: @cedar hello")
	tmux("send-keys", "-t", "tui", "Escape")
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(20 * time.Second)
	for exec.Command("tmux", "-L", sock, "has-session", "-t", "tui").Run() == nil {
		select {
		case <-tick.C:
		case <-deadline:
			t.Fatalf("Esc did not end the view:\n%s", screen())
		}
	}
}

// TestEscOfATerminalReplyDoesNotQuit: a terminal's reply to a query that
// reaches the view split after its ESC (a lone Esc, then "]11;rgb:…")
// leaves the view running and out of the input line; a real Esc still
// quits.
func TestEscOfATerminalReplyDoesNotQuit(t *testing.T) {
	m := tui.New(context.Background(), tui.Config{Title: "t", Statuses: statuses})
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(80, 20))
	tm.Send(tea.KeyMsg{Type: tea.KeyEsc})
	tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("]11;rgb:0000/0000/0000")})
	tm.Type("hi")
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return strings.Contains(string(b), "> hi") }, teatest.WithDuration(10*time.Second))
	tm.Send(tea.KeyMsg{Type: tea.KeyEsc})
	tm.WaitFinished(t, teatest.WithFinalTimeout(10*time.Second))
	final := tm.FinalModel(t).View()
	assert.NotContains(t, final, "]11;")
	assert.Contains(t, final, "> hi")
}
