package monitor_test

import (
	"context"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/monitor"
)

// TestServe: Serve listens (port 0), reports the address, serves the
// monitor and, once ctx ends, shuts down — ending an open event stream —
// and returns nil; a busy address is a listen error.
func TestServe(t *testing.T) {
	e := newEnv(t, 1, monitor.Config{Token: "tok"})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ready := make(chan net.Addr, 1)
	done := make(chan error, 1)
	go func() {
		done <- monitor.Serve(ctx, "127.0.0.1:0", e.mon, monitor.ServeConfig{Ready: func(a net.Addr) { ready <- a }, ShutdownTimeout: 5 * time.Second})
	}()
	var addr net.Addr
	select {
	case addr = <-ready:
	case err := <-done:
		t.Fatalf("Serve returned before listening: %v", err)
	}
	resp, err := http.Get("http://" + addr.String() + "/healthz")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)

	req, err := http.NewRequest("GET", "http://"+addr.String()+"/api/events", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer tok")
	stream, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer stream.Body.Close()
	require.Equal(t, http.StatusOK, stream.StatusCode)

	err = monitor.Serve(context.Background(), addr.String(), e.mon, monitor.ServeConfig{})
	require.Error(t, err, "the address is taken")
	assert.Contains(t, err.Error(), addr.String())

	cancel()
	require.NoError(t, <-done, "a shutdown after ctx ends is no error")
	_, err = http.Get("http://" + addr.String() + "/healthz")
	assert.Error(t, err, "nothing listens any more")
}
