package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/teatest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/cmd/existence/internal/cli/tui"
	"github.com/existence-loop/sdk/existence"
	"github.com/existence-loop/sdk/existence/existencetest"
	"github.com/existence-loop/sdk/existence/requests"
	"github.com/existence-loop/sdk/existence/runner"
	"github.com/existence-loop/sdk/monitor"
)

// childEnv makes the test binary run the existence command with the
// arguments in it (one per line), for the tmux test, instead of the tests.
const childEnv = "EXISTENCE_CLI_TEST_ARGS"

func TestMain(m *testing.M) {
	if args := os.Getenv(childEnv); args != "" {
		os.Exit(Main(strings.Split(args, "\n"), os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

var attachT0 = time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)

// monitored is the trio of fake agents behind a real monitor on an
// httptest server.
type monitored struct {
	rn   *runner.Runner
	reqs *requests.Queue
	srv  *httptest.Server
}

// newMonitored serves the trio's monitor, with token ("" for none).
func newMonitored(t *testing.T, token string) *monitored {
	t.Helper()
	m := &monitored{rn: testRunner(t, nil)}
	clock := existencetest.NewClock(attachT0)
	m.reqs = requests.NewMemory(requests.Options{Now: clock.Now})
	mon, err := monitor.New(monitor.Config{Runner: m.rn, Requests: m.reqs, Token: token, Clock: clock, Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	m.rn.Subscribe(mon.Observe)
	m.srv = httptest.NewServer(mon)
	t.Cleanup(func() { mon.Close(); m.srv.Close() })
	return m
}

// submit files the three requests of the console script.
func (m *monitored) submit(t *testing.T) {
	t.Helper()
	for _, s := range []struct {
		agent string
		kind  requests.Kind
		text  string
	}{{"builder", requests.Approval, "publish design/pump.md"}, {"scout", requests.Question, "which folder is mine?"}, {"analyst", requests.BuildRequest, "install graphviz"}} {
		_, err := m.reqs.Submit(context.Background(), s.agent, s.kind, s.text)
		require.NoError(t, err)
	}
}

// TestConsolesAgree: typed lines do the same in the terminal view attached
// to a monitor (tui -url, with or without a token) as on run's standard
// input: the same answers, host messages and inbox deliveries.
func TestConsolesAgree(t *testing.T) {
	script := "/requests\n/approve 1\n/answer 2 scout/, it is yours\n/reject 3 no installs here\n/approve 1\n/answer 9 x\n/answer\n/frobnicate\n@nobody hm\n@cedar just you\nhello\n/requests\n"
	want := func(p string) []string {
		return []string{
			p + `: #1 from Vault: req-000001 (approval, pending for 0s): "publish design/pump.md"`,
			p + `: #2 from Cedar: req-000002 (question, pending for 0s): "which folder is mine?"`,
			p + `: #3 from Cipher: req-000003 (build_request, pending for 0s): "install graphviz"`,
			p + ": req-000001 approved; Vault reads it at its next cycle",
			p + ": req-000002 answered; Cedar reads it at its next cycle",
			p + ": req-000003 rejected; Cipher reads it at its next cycle",
			p + ": requests: request already answered: req-000001 is approved",
			p + `: requests: no such request: "req-000009"`,
			p + ": usage: /answer N text",
			p + ": unknown command /frobnicate; " + commandHelp,
			p + `: no agent "nobody" (try @scout, @analyst or @builder)`,
			p + ": no open requests",
		}
	}
	for _, tt := range []struct {
		name, token string
		remote      bool
	}{{"run's stdin", "", false}, {"attached, no token", "", true}, {"attached, bearer token", "s3cret", true}} {
		t.Run(tt.name, func(t *testing.T) {
			m := newMonitored(t, tt.token)
			m.submit(t)
			l, prefix := trioLines(m.rn, m.reqs), "trio"
			if tt.remote {
				c, err := newMonitorClient(m.srv.URL, tt.token)
				require.NoError(t, err)
				att := newAttachment(c, time.Hour)
				stop, err := att.start(context.Background())
				require.NoError(t, err)
				defer stop()
				l, prefix = lines{c: att.console, prefix: "tui"}, "tui"
			}
			var out bytes.Buffer
			l.listen(context.Background(), strings.NewReader(script), &out)
			assert.Equal(t, want(prefix), strings.Split(strings.TrimSpace(out.String()), "\n"))
			host := func(id string) (texts []string) {
				for _, msg := range m.rn.Agent(id).State().Host {
					texts = append(texts, msg.Text)
				}
				return texts
			}
			assert.Equal(t, []string{"just you", "hello"}, host("scout"))
			assert.Equal(t, []string{"hello"}, host("builder"))
			assert.Equal(t, `your request req-000001 (approval: "publish design/pump.md") was approved`, m.rn.Agent("builder").State().Inbox[0].Text)
		})
	}
}

// TestAttachView drives the terminal view attached to a monitor: the
// panes show the agents, an agent's event arrives through the stream, and
// a typed line becomes a host message.
func TestAttachView(t *testing.T) {
	m := newMonitored(t, "s3cret")
	c, err := newMonitorClient(m.srv.URL+"/", "s3cret")
	require.NoError(t, err)
	att := newAttachment(c, 20*time.Millisecond)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stop, err := att.start(ctx)
	require.NoError(t, err)
	defer stop()

	tm := teatest.NewTestModel(t, tui.New(ctx, att.config("existence-loop · "+m.srv.URL)), teatest.WithInitialTermSize(160, 30))
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case e := <-att.events:
				tm.Send(tui.EventMsg(e))
			case n := <-att.notices:
				tm.Send(tui.NoticeMsg(n))
			}
		}
	}()
	var screen bytes.Buffer // every frame so far: a frame redraws only the lines that changed
	waitFor := func(want string) {
		t.Helper()
		require.Eventually(t, func() bool {
			b, _ := io.ReadAll(tm.Output())
			screen.Write(b)
			return bytes.Contains(screen.Bytes(), []byte(want))
		}, 20*time.Second, 10*time.Millisecond, "the view never showed %q:\n%s", want, &screen)
	}
	waitFor("Cedar (scout)")
	waitFor("Vault (builder)")

	// The stream is open once the monitor counts it; then an agent's
	// cycle (its fake model has no reply: the fallback goal) reaches the
	// thoughts.
	require.Eventually(t, func() bool { return monitorStreams(t, m) == 1 }, 20*time.Second, 10*time.Millisecond)
	require.NoError(t, m.rn.Agent("analyst").Tick(ctx))
	waitFor("Cipher 🎯 " + existence.FallbackContent)

	tm.Type("@cedar look at design/")
	tm.Send(tea.KeyMsg{Type: tea.KeyEnter})
	waitFor("sent: @cedar look at design/")
	require.Len(t, m.rn.Agent("scout").State().Host, 1)
	assert.Equal(t, "look at design/", m.rn.Agent("scout").State().Host[0].Text)

	tm.Send(tea.KeyMsg{Type: tea.KeyEsc})
	tm.WaitFinished(t, teatest.WithFinalTimeout(10*time.Second))
}

// monitorStreams reads existence_monitor_streams from the monitor's
// metrics.
func monitorStreams(t *testing.T, m *monitored) int {
	t.Helper()
	c, err := newMonitorClient(m.srv.URL, "s3cret")
	require.NoError(t, err)
	req, err := c.request(context.Background(), "GET", "/metrics", nil)
	require.NoError(t, err)
	resp, err := c.hc.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var b bytes.Buffer
	_, err = b.ReadFrom(resp.Body)
	require.NoError(t, err)
	var n int
	for line := range strings.SplitSeq(b.String(), "\n") {
		if _, err := fmt.Sscanf(line, "existence_monitor_streams %d", &n); err == nil {
			return n
		}
	}
	return -1
}

func TestAttachErrors(t *testing.T) {
	m := newMonitored(t, "s3cret")
	closed := httptest.NewServer(nil)
	closed.Close()
	for _, tt := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"not a URL", []string{"-url", "127.0.0.1:8080"}, 2, "want the monitor's http:// or https:// address"},
		{"bad refresh", []string{"-refresh", "0s"}, 2, "-refresh must be positive"},
		{"unreachable", []string{"-url", closed.URL}, 1, "connection refused"},
		{"no token", []string{"-url", m.srv.URL, "-token", ""}, 1, "missing bearer token"},
		{"wrong token", []string{"-url", m.srv.URL, "-token", "guess"}, 1, "invalid bearer token"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := runCLI(t, append([]string{"tui"}, tt.args...)...)
			assert.Equal(t, tt.code, code, stderr)
			assert.Contains(t, stderr, tt.want)
			if tt.code == 1 {
				assert.True(t, strings.HasPrefix(stderr, "existence tui: the monitor at "), stderr)
			}
		})
	}
}

// TestAttachUnderTmux runs `existence tui -url` in a real terminal (tmux)
// against a monitor in this process, types a host message and quits, as
// a person would.
func TestAttachUnderTmux(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux not found: install it with `apt-get install tmux`")
	}
	m := newMonitored(t, "s3cret")
	bin, err := os.Executable()
	require.NoError(t, err)
	// A socket of this run's own: a name shared by runs (-count=N) can
	// reach the server an earlier run is still killing, which then exits
	// under the new session.
	sock := filepath.Join(t.TempDir(), "tmux")
	var status string
	tmux := func(args ...string) string {
		out, err := exec.Command("tmux", append([]string{"-S", sock}, args...)...).CombinedOutput()
		if err != nil && status != "" {
			code, _ := os.ReadFile(status)
			stderr, _ := os.ReadFile(status + ".stderr")
			require.NoError(t, err, "tmux %v: %s\nthe view: %s %s", args, out, code, stderr)
		}
		require.NoError(t, err, "tmux %v: %s", args, out)
		return string(out)
	}
	args := strings.Join([]string{"tui", "-url", m.srv.URL, "-token", "s3cret", "-refresh", "50ms"}, "\n")
	// The view runs under sh, which writes its exit status and error
	// output where a failure can show them: started straight from tmux,
	// a child that ends takes the tmux server with it ("server exited
	// unexpectedly") and says nothing of why.
	status = filepath.Join(t.TempDir(), "status")
	tmux("-f", "/dev/null", "new-session", "-d", "-s", "tui", "-x", "140", "-y", "30", "env", childEnv+"="+args, "TERM=xterm-256color",
		"sh", "-c", `"$0" 2>"$1.stderr"; echo "exit status $?" >"$1"`, bin, status)
	t.Cleanup(func() { _ = exec.Command("tmux", "-S", sock, "kill-server").Run() })
	tmux("set-option", "-g", "status", "off")

	screen := func() string { return tmux("capture-pane", "-p", "-t", "tui") }
	waitFor := func(want string) string {
		t.Helper()
		var s string
		require.Eventually(t, func() bool { s = screen(); return strings.Contains(s, want) }, 20*time.Second, 50*time.Millisecond, "the screen never showed %q:\n%s", want, s)
		return s
	}
	s := waitFor("> █")
	for _, want := range []string{"existence-loop · " + m.srv.URL, "3 agents", "Cedar (scout)", "Cipher (analyst)", "Vault (builder)"} {
		assert.Contains(t, s, want)
	}
	tmux("send-keys", "-t", "tui", "-l", "@vault hello from tmux")
	tmux("send-keys", "-t", "tui", "Enter")
	waitFor("sent: @vault hello from tmux")
	host := m.rn.Agent("builder").State().Host
	require.Len(t, host, 1)
	assert.Equal(t, "hello from tmux", host[0].Text)
	tmux("send-keys", "-t", "tui", "Escape")
	require.Eventually(t, func() bool { return exec.Command("tmux", "-S", sock, "has-session", "-t", "tui").Run() != nil }, 20*time.Second, 50*time.Millisecond, "Esc did not end the view:\n%s", screen())
}
