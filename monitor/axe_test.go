package monitor_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/internal/npmtest"
	"github.com/existence-loop/sdk/monitor"
)

// axeResult is the part of axe-core's results the test reads.
type axeResult struct {
	Violations []struct {
		ID     string `json:"id"`
		Impact string `json:"impact"`
		Help   string `json:"help"`
		Nodes  []struct {
			Target []any `json:"target"`
		} `json:"nodes"`
	} `json:"violations"`
}

// TestDashboardAccessibility runs axe-core (the accessibility engine of
// browsers' audit tools) on the dashboard in headless Chromium, at a
// desktop and a phone width: no serious or critical violation (a
// scrolling list the keyboard cannot reach, a control without a name...)
// and no heading level skipped. The favicon is served, not a 404.
func TestDashboardAccessibility(t *testing.T) {
	bin := chromium(t)
	axe, err := os.ReadFile(npmtest.File(t, "axe-core/axe.min.js"))
	require.NoError(t, err)
	e := newEnv(t, 3, monitor.Config{Token: "s3cret"})
	srv := httptest.NewServer(e.mon)
	t.Cleanup(srv.Close)
	t.Cleanup(e.mon.Close)

	req, err := http.NewRequest(http.MethodGet, srv.URL+"/favicon.ico", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer s3cret")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode, "/favicon.ico")

	for _, width := range []int{1280, 390} {
		actx, cancelAlloc := chromedp.NewExecAllocator(t.Context(),
			chromedp.ExecPath(bin), chromedp.NoSandbox, chromedp.Headless, chromedp.DisableGPU,
			chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
			chromedp.Flag("disable-background-networking", true),
			chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(width, 900))
		bctx, cancelBrowser := chromedp.NewContext(actx)
		bctx, cancel := context.WithTimeout(bctx, 60*time.Second)
		require.NoError(t, chromedp.Do(bctx,
			chromedp.Navigate(srv.URL+"/?token=s3cret"),
			chromedp.WaitVisible(`article.card[data-agent="builder"]`),
			chromedp.WaitVisible(`#conn.live`),
		))
		// An hour's thoughts: the list scrolls.
		_, err := chromedp.Run(bctx, chromedp.Evaluate[any](
			`for (let i = 0; i < 200; i++) { const li = document.createElement("li"); li.textContent = "Cedar: thought " + i; document.getElementById("thoughts").prepend(li) }; 0`))
		require.NoError(t, err)
		_, err = chromedp.Run(bctx, chromedp.Evaluate[any](string(axe)+";0"))
		require.NoError(t, err, "loading axe-core")
		raw, err := chromedp.Run(bctx, chromedp.Evaluate[string](
			`axe.run(document, {resultTypes: ["violations"]}).then(r => JSON.stringify(r))`, chromedp.EvalAwaitPromise))
		cancel()
		cancelBrowser()
		cancelAlloc()
		require.NoError(t, err, "axe.run")
		var res axeResult
		require.NoError(t, json.Unmarshal([]byte(raw), &res))
		for _, v := range res.Violations {
			var where []string
			for _, n := range v.Nodes {
				b, _ := json.Marshal(n.Target)
				where = append(where, string(b))
			}
			msg := v.ID + " (" + v.Impact + "): " + v.Help + " at " + strings.Join(where, ", ")
			if v.Impact == "serious" || v.Impact == "critical" || v.ID == "heading-order" {
				t.Errorf("%d px: %s", width, msg)
			} else {
				t.Logf("%d px: %s", width, msg)
			}
		}
	}
}
