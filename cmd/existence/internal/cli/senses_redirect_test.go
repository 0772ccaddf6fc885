package cli

import (
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTrioPollRedirectRefused: `existence run -poll URL` where URL
// redirects to another loopback address (127.0.0.2, standing for another
// host): that address receives no request, and an event says why.
func TestTrioPollRedirectRefused(t *testing.T) {
	t.Chdir(t.TempDir())
	l, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Skipf("cannot listen on 127.0.0.2 (Linux has all of 127/8): %v", err)
	}
	var hits atomic.Int64
	other := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	other.Listener.Close()
	other.Listener = l
	other.Start()
	defer other.Close()
	origin := httptest.NewServer(http.RedirectHandler(other.URL+"/latest/meta-data/", http.StatusFound))
	defer origin.Close()

	f := &fakeOllama{t: t, prompts: map[string][]string{}}
	srv := httptest.NewServer(http.HandlerFunc(f.serve))
	defer srv.Close()
	stdout, stderr, err := runTrioTest(t, trioArgs(t, srv.URL, "-heartbeat", "100ms", "-cycles", "3", "-poll", origin.URL)...)
	require.NoError(t, err, stderr)
	assert.Zero(t, hits.Load(), "the other host received no request")
	assert.Contains(t, stdout, "redirect to another origin refused", "an event says why")
	assert.Contains(t, stdout, "-poll-allow-redirect 127.0.0.2", "and how to allow it")
}
