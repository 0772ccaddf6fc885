package monitor_test

import (
	"context"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/existence/budget"
	"github.com/existence-loop/sdk/existence/requests"
	"github.com/existence-loop/sdk/existence/runner"
	"github.com/existence-loop/sdk/monitor"
)

// chromium returns the browser binary, or skips the test.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("chromium not found: install it with `apt-get install chromium`")
	return ""
}

// TestDashboardInABrowser drives the dashboard in a real headless Chromium
// as a person would: three agents, three cards; a host message sent from
// the page reaches the agent; a stressor appears live after an event; a
// request is answered; a screenshot is saved ($MONITOR_SCREENSHOT, else
// the test's temporary directory).
func TestDashboardInABrowser(t *testing.T) {
	bin := chromium(t)
	e := newEnv(t, 3, monitor.Config{Token: "s3cret"}, func(rc *runner.Config) {
		rc.Budget = budget.Budget{Tokens: 100, Window: time.Hour} // one cycle spends it
	})
	ctx := context.Background()
	req, err := e.reqs.Submit(ctx, "builder", requests.Approval, "publish design/pump.md to the wiki")
	require.NoError(t, err)
	e.clock.Advance(90 * time.Minute)
	srv := httptest.NewServer(e.mon)
	t.Cleanup(srv.Close)
	t.Cleanup(e.mon.Close) // ends the page's event stream before srv.Close waits for it

	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(bin),
		chromedp.NoSandbox, // CI runs as root
		chromedp.Headless,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1400, 900),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	defer cancelAlloc()
	bctx, cancelBrowser := chromedp.NewContext(actx)
	defer cancelBrowser()
	bctx, cancel := context.WithTimeout(bctx, 90*time.Second)
	defer cancel()

	// Three agents, three cards; the token is exchanged for a cookie.
	require.NoError(t, chromedp.Do(bctx,
		chromedp.Navigate(srv.URL+"/?token=s3cret"),
		chromedp.WaitVisible(`article.card[data-agent="builder"]`),
		chromedp.WaitVisible(`#conn.live`),
	))
	cards, err := chromedp.Run(bctx, chromedp.Evaluate[int](`document.querySelectorAll("article.card").length`))
	require.NoError(t, err)
	assert.Equal(t, 3, cards)
	loc, err := chromedp.Run(bctx, chromedp.Location())
	require.NoError(t, err)
	assert.Equal(t, srv.URL+"/", loc, "the token left the address")

	// A host message from the page reaches the agent.
	scout := `article.card[data-agent="scout"]`
	require.NoError(t, chromedp.Do(bctx,
		chromedp.SendKeys(scout+` input.msg`, "hello from the page"),
		chromedp.Click(scout+` form button`),
	))
	_, err = chromedp.Run(bctx, chromedp.Poll[bool](`document.querySelector('`+scout+` .card-status').textContent === "delivered to Cedar"`))
	require.NoError(t, err)
	host := e.rnr.Agent("scout").State().Host
	require.Len(t, host, 1)
	assert.Equal(t, "hello from the page", host[0].Text)

	// A stressor appears live after an event.
	e.models["analyst"].Add(stressorReply(t, "review the notes", "invisibility"))
	require.NoError(t, e.rnr.Agent("analyst").Tick(ctx))
	require.NoError(t, chromedp.Do(bctx, chromedp.WaitVisible(`article.card[data-agent="analyst"] li.stressor[data-type="invisibility"]`)))
	goal, err := chromedp.Run(bctx, chromedp.Text(`article.card[data-agent="analyst"] .goal`))
	require.NoError(t, err)
	assert.Equal(t, "🎯 review the notes", goal)

	// Its card shows the tokens used and the spent budget.
	analyst := `article.card[data-agent="analyst"]`
	require.NoError(t, chromedp.Do(bctx, chromedp.WaitVisible(analyst+` .budget.spent`)))
	spent, err := chromedp.Run(bctx, chromedp.Text(analyst+` .budget`))
	require.NoError(t, err)
	assert.Contains(t, spent, "of 100 tokens per 1h — spent: autonomy waits until")
	used, err := chromedp.Run(bctx, chromedp.Text(analyst+` .usage`))
	require.NoError(t, err)
	assert.Equal(t, "tokens 900 in + 120 out in 1 call", used, "the server's counts")
	_, err = chromedp.Run(bctx, chromedp.Poll[bool](`[...document.querySelectorAll("#thoughts li")].some((li) => li.textContent.includes("Cipher 🪙 this agent's token budget is spent"))`))
	require.NoError(t, err, "the budget_exhausted event is in the thoughts")
	header, err := chromedp.Run(bctx, chromedp.Text(`#lanes`))
	require.NoError(t, err)
	assert.Contains(t, header, "limit 1, 0 in flight")

	// A request is answered from the page and reaches the agent's inbox.
	item := `li.request[data-id="` + req.ID + `"]`
	require.NoError(t, chromedp.Do(bctx, chromedp.WaitVisible(item)))
	waiting, err := chromedp.Run(bctx, chromedp.Text(item))
	require.NoError(t, err)
	require.NoError(t, chromedp.Do(bctx,
		chromedp.SendKeys(item+` textarea`, "go ahead"),
		chromedp.Click(item+` button.approved`),
		chromedp.WaitNotPresent(item),
	))
	assert.Contains(t, waiting, "waiting 1.5h", "open requests show their age")
	inbox := e.rnr.Agent("builder").State().Inbox
	require.Len(t, inbox, 1)
	assert.Contains(t, inbox[0].Text, "was approved: go ahead")

	// A screenshot, as a test artifact.
	png, err := chromedp.Run(bctx, chromedp.FullScreenshot(100))
	require.NoError(t, err)
	path := os.Getenv("MONITOR_SCREENSHOT")
	if path == "" {
		path = filepath.Join(t.TempDir(), "dashboard.png")
	}
	require.NoError(t, os.WriteFile(path, png, 0o644))
	t.Logf("screenshot: %s (%d bytes)", path, len(png))
	assert.Greater(t, len(png), 10_000)
}
