package minds_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/existence/existencetest"
	"github.com/existence-loop/sdk/existence/minds"
	"github.com/existence-loop/sdk/slot"
)

// serveOn starts h on ip (a loopback address); the count is of the
// requests it received.
func serveOn(t *testing.T, ip string, h http.Handler) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	l, err := net.Listen("tcp", ip+":0")
	if err != nil {
		t.Skipf("cannot listen on %s (a loopback address; Linux has all of 127/8): %v", ip, err)
	}
	var n atomic.Int64
	hs := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		h.ServeHTTP(w, r)
	}))
	hs.Listener.Close()
	hs.Listener = l
	hs.Start()
	t.Cleanup(hs.Close)
	return hs, &n
}

// TestRedirectStaysOnOrigin: a poller or feed on 127.0.0.1 redirected to
// 127.0.0.2 (another host) fails with ErrRedirect, and 127.0.0.2 receives
// no request; a redirect on the same origin is followed; a host in
// AllowRedirect may be reached.
func TestRedirectStaysOnOrigin(t *testing.T) {
	other, otherHits := serveOn(t, "127.0.0.2", &server{body: "secret metadata", ctype: "text/plain"})
	origin, _ := serveOn(t, "127.0.0.1", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/away":
			http.Redirect(w, r, other.URL+"/latest", http.StatusFound)
		case "/moved":
			http.Redirect(w, r, "/here", http.StatusMovedPermanently)
		default:
			w.Header().Set("Content-Type", "text/plain")
			_, _ = w.Write([]byte("status: fine"))
		}
	}))
	env := newBoard(existencetest.NewClock(t0)).env

	p, err := minds.NewPoller(minds.PollConfig{URL: origin.URL + "/away"})
	require.NoError(t, err)
	err = p.Run(context.Background(), env)
	require.ErrorIs(t, err, minds.ErrRedirect)
	assert.Contains(t, err.Error(), "-poll-allow-redirect 127.0.0.2", "says how to allow it")
	f, err := minds.NewFeed(minds.FeedConfig{URL: origin.URL + "/away"})
	require.NoError(t, err)
	require.ErrorIs(t, f.Run(context.Background(), env), minds.ErrRedirect)
	assert.Zero(t, otherHits.Load(), "the other host received no request")

	b := newBoard(existencetest.NewClock(t0))
	p, err = minds.NewPoller(minds.PollConfig{URL: origin.URL + "/moved", Interval: time.Hour})
	require.NoError(t, err)
	run(t, p, b.env)
	assert.Contains(t, b.next(t, "same origin").Summary, "status: fine")

	b = newBoard(existencetest.NewClock(t0))
	p, err = minds.NewPoller(minds.PollConfig{URL: origin.URL + "/away", Interval: time.Hour, AllowRedirect: []string{"127.0.0.2"}})
	require.NoError(t, err)
	run(t, p, b.env)
	assert.Contains(t, b.next(t, "allowed host").Summary, "secret metadata")
	assert.Equal(t, int64(1), otherHits.Load())
}

// TestRedirectRefusalIsReported: in a runner, the refused redirect
// leaves a failed slot that says why.
func TestRedirectRefusalIsReported(t *testing.T) {
	other, otherHits := serveOn(t, "127.0.0.2", &server{body: "x", ctype: "text/plain"})
	origin, _ := serveOn(t, "127.0.0.1", http.RedirectHandler(other.URL, http.StatusFound))
	p, err := minds.NewPoller(minds.PollConfig{Name: "status-page", URL: origin.URL})
	require.NoError(t, err)
	a := agentWith(t, p)
	require.Eventually(t, func() bool {
		s, ok := slot.Find(a.Slots(), "status-page")
		return ok && s.Status == slot.Failed && strings.Contains(s.Summary, "redirect to another origin refused")
	}, 10*time.Second, time.Millisecond)
	assert.Zero(t, otherHits.Load())
}

// TestAddressesRefused: link-local and metadata addresses are refused at
// connection time (before any packet is sent), even when configured; a
// redirect to an allowed host does not reach a private or metadata
// address that the configured URL's class does not allow; a URL on
// loopback (localhost) may reach loopback.
func TestAddressesRefused(t *testing.T) {
	env := newBoard(existencetest.NewClock(t0)).env
	for _, tc := range []struct {
		url          string
		allowPrivate bool
	}{
		{"http://169.254.169.254/latest/meta-data/", false},
		{"http://169.254.169.254/latest/meta-data/", true},
		{"http://[fe80::1]:80/", true},
		{"http://[fd00:ec2::254]/", true},
		{"http://100.100.100.200/", true},
		{"http://0.0.0.0:80/", true},
	} {
		p, err := minds.NewPoller(minds.PollConfig{URL: tc.url, AllowPrivate: tc.allowPrivate})
		require.NoError(t, err)
		err = p.Run(context.Background(), env)
		require.ErrorIs(t, err, minds.ErrAddress, tc.url)
	}
	for _, target := range []string{"http://10.0.0.1:9/", "http://192.168.1.1:9/", "http://[fc00::1]:9/", "http://169.254.169.254/"} {
		origin, _ := serveOn(t, "127.0.0.1", http.RedirectHandler(target, http.StatusFound))
		u, err := url.Parse(target)
		require.NoError(t, err)
		p, err := minds.NewPoller(minds.PollConfig{URL: origin.URL, AllowRedirect: []string{u.Hostname()}})
		require.NoError(t, err)
		require.ErrorIs(t, p.Run(context.Background(), env), minds.ErrAddress, target)
	}
	hs, _ := serveOn(t, "127.0.0.1", &server{body: "ok", ctype: "text/plain"})
	b := newBoard(existencetest.NewClock(t0))
	p, err := minds.NewPoller(minds.PollConfig{URL: strings.Replace(hs.URL, "127.0.0.1", "localhost", 1), Interval: time.Hour})
	require.NoError(t, err)
	run(t, p, b.env)
	assert.Contains(t, b.next(t, "localhost is loopback").Summary, "ok")
}
