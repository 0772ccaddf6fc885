package monitor_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/monitor"
)

// TestDashboardShowsSlots drives the dashboard in a real headless
// Chromium: each card lists its agent's slots, most important first, a
// stale one marked; the side panel lists the shared board; a slot posted
// through the API while the page is open appears live.
func TestDashboardShowsSlots(t *testing.T) {
	bin := chromium(t)
	e := newEnv(t, 3, monitor.Config{Token: "s3cret"})
	bearer := map[string]string{"Authorization": "Bearer s3cret"}
	post := func(target, body string) {
		t.Helper()
		status, out := do(t, e.mon, "POST", target, body, bearer)
		require.Equal(t, http.StatusAccepted, status, out)
	}
	post("/api/agents/scout/slots", `{"slot_id":"weather","title":"Weather","status":"completed","summary":"storm at 15:00","importance":0.4,"next_run":600}`)
	post("/api/agents/scout/slots", `{"slot_id":"backup","title":"Backup","status":"failed","summary":"disk full","importance":0.9}`)
	post("/api/slots", `{"slot_id":"news","title":"News","status":"completed","summary":"the kiln is hot","importance":0.5}`)
	e.clock.Advance(time.Hour) // the weather is stale: it expected an update after 10 minutes

	srv := httptest.NewServer(e.mon)
	t.Cleanup(srv.Close)
	t.Cleanup(e.mon.Close)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(bin), chromedp.NoSandbox, chromedp.Headless, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck, chromedp.Flag("disable-background-networking", true), chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1400, 900))
	defer cancelAlloc()
	bctx, cancelBrowser := chromedp.NewContext(actx)
	defer cancelBrowser()
	bctx, cancel := context.WithTimeout(bctx, 90*time.Second)
	defer cancel()

	scout := `article.card[data-agent="scout"]`
	require.NoError(t, chromedp.Do(bctx,
		chromedp.Navigate(srv.URL+"/?token=s3cret"),
		chromedp.WaitVisible(scout+` li.slot[data-slot="weather"]`),
		chromedp.WaitVisible(`#conn.live`),
		chromedp.WaitVisible(`#slots li.slot[data-slot="news"]`),
	))
	order, err := chromedp.Run(bctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll('`+scout+` li.slot')].map(li => li.dataset.slot)`))
	require.NoError(t, err)
	assert.Equal(t, []string{"backup", "weather"}, order, "most important first")
	weather, err := chromedp.Run(bctx, chromedp.Text(scout+` li.slot[data-slot="weather"]`))
	require.NoError(t, err)
	assert.Equal(t, "📌 Weather: completed — storm at 15:00 (stale)", weather)
	stale, err := chromedp.Run(bctx, chromedp.Evaluate[bool](`document.querySelector('`+scout+` li.slot[data-slot="weather"]').classList.contains("stale")`))
	require.NoError(t, err)
	assert.True(t, stale)
	news, err := chromedp.Run(bctx, chromedp.Text(`#slots li.slot[data-slot="news"]`))
	require.NoError(t, err)
	assert.Equal(t, "📌 News: completed — the kiln is hot", news)
	none, err := chromedp.Run(bctx, chromedp.Evaluate[int](`document.querySelectorAll('article.card[data-agent="analyst"] li.slot').length`))
	require.NoError(t, err)
	assert.Zero(t, none, "an agent without slots shows none")

	// Live: a slot posted now appears on its card and in the thoughts.
	post("/api/agents/analyst/slots", `{"slot_id":"door","title":"Front door","status":"changed","summary":"someone rang","notify_user":true}`)
	post("/api/slots", `{"slot_id":"mail","title":"Mail","status":"completed","summary":"3 letters","importance":0.7}`)
	require.NoError(t, chromedp.Do(bctx,
		chromedp.WaitVisible(`article.card[data-agent="analyst"] li.slot[data-slot="door"]`),
		chromedp.WaitVisible(`#slots li.slot[data-slot="mail"]`),
	))
	_, err = chromedp.Run(bctx, chromedp.Poll[bool](`[...document.querySelectorAll('#thoughts li')].some(li => li.textContent.includes("📌 Front door: changed - someone rang"))`))
	require.NoError(t, err)
	shared, err := chromedp.Run(bctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll('#slots li.slot')].map(li => li.dataset.slot)`))
	require.NoError(t, err)
	assert.Equal(t, []string{"mail", "news"}, shared, "the shared board, most important first")

	// A screenshot, as a test artifact.
	png, err := chromedp.Run(bctx, chromedp.FullScreenshot(100))
	require.NoError(t, err)
	path := os.Getenv("MONITOR_SLOTS_SCREENSHOT")
	if path == "" {
		path = filepath.Join(t.TempDir(), "dashboard-slots.png")
	}
	require.NoError(t, os.WriteFile(path, png, 0o644))
	t.Logf("screenshot: %s (%d bytes)", path, len(png))
}
