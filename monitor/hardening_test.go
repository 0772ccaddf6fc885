package monitor_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/existence/runner"
	"github.com/existence-loop/sdk/hostaccess"
	"github.com/existence-loop/sdk/monitor"
	"github.com/existence-loop/sdk/store/memstore"
)

// runnerOnly is a monitor.Config over an empty runner.
func runnerOnly(t *testing.T) monitor.Config {
	t.Helper()
	r, err := runner.New(runner.Config{Store: memstore.New(), Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	return monitor.Config{Runner: r, Logger: slog.New(slog.DiscardHandler)}
}

// TestNewRefusesAPublicAddressWithoutToken: a monitor that would be
// reachable from other machines without a token is refused at start, with
// an error that names the Config fields; the loud opt-out for a proxy
// that authenticates is allowed and logged as a warning.
func TestNewRefusesAPublicAddressWithoutToken(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:8080", ":8080", "[::]:8080", "192.168.1.5:8080", "example.com:8080", "monitor.internal:80"} {
		cfg := runnerOnly(t)
		cfg.Addr = addr
		_, err := monitor.New(cfg)
		require.ErrorIs(t, err, monitor.ErrNoToken, addr)
		assert.Contains(t, err.Error(), "Config.Addr "+`"`+addr+`"`)
		assert.Contains(t, err.Error(), "set Config.Token")
		assert.Contains(t, err.Error(), "Config.InsecureNoTokenBehindProxy")

		for _, weak := range []string{"x", " ", "                    ", "s3cret", "a b c d e f g\t\n h i j k l m n o",
			"aaaaaaaaaaaaaaaa", "abababababababababab", "abcdefghijklmnop", "0123456789abcdef", "zyxwvutsrqponmlk"} {
			cfg.Token = weak
			_, err = monitor.New(cfg)
			require.ErrorIs(t, err, hostaccess.ErrWeakToken, "%s with the token %q", addr, weak)
		}
		cfg.Token = "f3a9c01e7b2d8645"
		m, err := monitor.New(cfg)
		require.NoError(t, err, "%s with a token of 16 characters", addr)
		m.Close()
		cfg.Token = hostaccess.GenerateToken()
		m, err = monitor.New(cfg)
		require.NoError(t, err, "%s with a generated token", addr)
		m.Close()
	}
	loop := runnerOnly(t)
	loop.Addr, loop.Token = "127.0.0.1:8080", "x"
	m, err := monitor.New(loop)
	require.NoError(t, err, "on loopback any token will do")
	m.Close()
	for _, addr := range []string{"127.0.0.1:8080", "127.0.0.2:0", "[::1]:8080", "localhost:8080", "LocalHost:1", ""} {
		cfg := runnerOnly(t)
		cfg.Addr = addr
		m, err := monitor.New(cfg)
		require.NoError(t, err, "%q is loopback (or unknown)", addr)
		m.Close()
	}

	var logs bytes.Buffer
	cfg := runnerOnly(t)
	cfg.Addr, cfg.InsecureNoTokenBehindProxy = "0.0.0.0:8080", true
	cfg.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	m, err = monitor.New(cfg)
	require.NoError(t, err)
	m.Close()
	assert.Contains(t, logs.String(), "level=WARN")
	assert.Contains(t, logs.String(), "WITHOUT AUTHENTICATION")
	assert.Contains(t, logs.String(), "addr=0.0.0.0:8080")
}

// TestPageNeedsTheToken: with a token, the page, its script and the API
// all need it; a client without it never sees a CSRF token.
func TestPageNeedsTheToken(t *testing.T) {
	e := newEnv(t, 1, monitor.Config{Token: "s3cret"})
	for _, path := range []string{"/", "/static/app.js", "/api/agents", "/?token=wrong"} {
		status, body := do(t, e.mon, "GET", path, "", nil)
		assert.Equal(t, http.StatusUnauthorized, status, path)
		assert.NotContains(t, body, "csrf", path)
	}
	status, body := do(t, e.mon, "GET", "/", "", map[string]string{"Authorization": "Bearer s3cret"})
	assert.Equal(t, 200, status)
	assert.Contains(t, body, `name="csrf-token"`)
}

// TestSessionsAndTheirCSRFTokens: every login gets its own session and
// CSRF token; sessions signed with the token survive a restart and end
// when the token changes.
func TestSessionsAndTheirCSRFTokens(t *testing.T) {
	e := newEnv(t, 1, monitor.Config{Token: "s3cret"})
	a, b := sessionCookie(t, e), sessionCookie(t, e)
	assert.NotEqual(t, a, b)
	ta := pageCSRF(t, e.mon, map[string]string{"Cookie": a})
	tb := pageCSRF(t, e.mon, map[string]string{"Cookie": b})
	assert.NotEqual(t, ta, tb)

	restarted := hostaccess.NewAuth(hostaccess.AuthConfig{Token: "s3cret"})
	req := httptest.NewRequest("POST", "/api/messages", nil)
	req.Host = "127.0.0.1"
	req.Header.Set("Cookie", a)
	req.Header.Set(hostaccess.CSRFHeader, ta)
	status, _ := restarted.Check(req)
	assert.Zero(t, status, "a session outlives a restart with the same token")
	assert.Equal(t, ta, restarted.CSRFToken(req))
	status, _ = hostaccess.NewAuth(hostaccess.AuthConfig{Token: "rotated"}).Check(req)
	assert.Equal(t, http.StatusUnauthorized, status, "a new token ends every session")
	assert.Empty(t, hostaccess.NewAuth(hostaccess.AuthConfig{}).CSRFToken(req), "without a token, a session of another process is none")
}

// TestHostCheck: the Host header may name localhost, a loopback address,
// the bound address or a configured name, and nothing else: not any IP
// literal.
func TestHostCheck(t *testing.T) {
	tests := []struct {
		name  string
		cfg   hostaccess.AuthConfig
		hosts map[string]bool
	}{
		{"no address", hostaccess.AuthConfig{}, map[string]bool{
			"localhost": true, "app.localhost:1": true, "127.0.0.1:80": true, "127.1.2.3": true, "[::1]:8080": true,
			"LOCALHOST": true, "localhost.": true, "foo.localhost": true, "Foo.LocalHost.:8080": true,
			"localhost.attacker.example": false, "localhost..": false, "xlocalhost": false,
			"192.0.2.10": false, "[2001:db8::1]:80": false, "attacker.example": false, "": false, "10.0.0.1:80": false,
		}},
		{"bound to one address", hostaccess.AuthConfig{Addr: "192.0.2.10:8080"}, map[string]bool{
			"192.0.2.10:8080": true, "192.0.2.10": true, "192.0.2.11:8080": false, "localhost:8080": true,
		}},
		{"bound to an IPv6 address", hostaccess.AuthConfig{Addr: "[2001:DB8::1]:8080"}, map[string]bool{
			"[2001:db8::1]:8080": true, "[2001:db8:0:0::1]": true, "[2001:db8::2]": false,
		}},
		{"bound to a name", hostaccess.AuthConfig{Addr: "Monitor.Internal:8080"}, map[string]bool{
			"monitor.internal:8080": true, "MONITOR.INTERNAL.": true, "other.internal": false,
		}},
		{"allowed names", hostaccess.AuthConfig{AllowedHosts: []string{"Dash.Example", "198.51.100.4"}}, map[string]bool{
			"dash.example:443": true, "198.51.100.4": true, "198.51.100.5": false,
		}},
		{"every host", hostaccess.AuthConfig{AllowedHosts: []string{"*"}}, map[string]bool{"anything.example": true}},
	}
	for _, tt := range tests {
		a := hostaccess.NewAuth(tt.cfg)
		for host, want := range tt.hosts {
			assert.Equal(t, want, a.HostAllowed(host), "%s: %q", tt.name, host)
		}
	}

	// Bound to every interface: this machine's addresses pass, others do
	// not.
	a := hostaccess.NewAuth(hostaccess.AuthConfig{Addr: "0.0.0.0:8080"})
	addrs, err := net.InterfaceAddrs()
	require.NoError(t, err)
	for _, ad := range addrs {
		if n, ok := ad.(*net.IPNet); ok {
			assert.True(t, a.HostAllowed(net.JoinHostPort(n.IP.String(), "8080")), n.IP.String())
		}
	}
	assert.False(t, a.HostAllowed("203.0.113.99:8080"))
}

// TestNewServerSettings: the helper's server has the safe timeouts and
// limits, and shutting it down ends the monitor's event streams.
func TestNewServerSettings(t *testing.T) {
	e := newEnv(t, 1, monitor.Config{})
	srv := monitor.NewServer("127.0.0.1:0", e.mon)
	assert.Equal(t, "127.0.0.1:0", srv.Addr)
	assert.Equal(t, monitor.ServerReadHeaderTimeout, srv.ReadHeaderTimeout)
	assert.Equal(t, 10*time.Second, srv.ReadHeaderTimeout)
	assert.Equal(t, 30*time.Second, srv.ReadTimeout)
	assert.Equal(t, 2*time.Minute, srv.IdleTimeout)
	assert.Equal(t, 16<<10, srv.MaxHeaderBytes)
	assert.Zero(t, srv.WriteTimeout, "event streams last")

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	base := "http://" + ln.Addr().String()

	resp, err := http.Get(base + "/healthz")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, 200, resp.StatusCode)

	// Headers over the limit: 431.
	req, err := http.NewRequest("GET", base+"/healthz", nil)
	require.NoError(t, err)
	req.Header.Set("X-Padding", strings.Repeat("x", 64<<10))
	resp, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusRequestHeaderFieldsTooLarge, resp.StatusCode)

	// Shutdown ends an open event stream (Close is registered).
	stream, err := http.Get(base + "/api/events")
	require.NoError(t, err)
	defer stream.Body.Close()
	line, err := bufio.NewReader(stream.Body).ReadString('\n')
	require.NoError(t, err)
	assert.Equal(t, ": connected\n", line)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	require.NoError(t, srv.Shutdown(ctx))
	assert.ErrorIs(t, <-done, http.ErrServerClosed)
	_, err = io.ReadAll(stream.Body)
	assert.NoError(t, err, "the stream ended cleanly")
}

// TestNewServerClosesSlowloris: 200 connections that send their headers
// slowly, never finishing them, are all closed by the helper's server
// once ServerReadHeaderTimeout passes (a bare http.Server keeps them open
// for ever). It takes ServerReadHeaderTimeout (10 s) of wall time.
func TestNewServerClosesSlowloris(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for the server's ReadHeaderTimeout (10 s)")
	}
	e := newEnv(t, 1, monitor.Config{})
	srv := monitor.NewServer("127.0.0.1:0", e.mon)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })

	const n = 200
	var wg sync.WaitGroup
	closed := make(chan error, n)
	for range n {
		c, err := net.Dial("tcp", ln.Addr().String())
		require.NoError(t, err)
		t.Cleanup(func() { c.Close() })
		_, err = io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: 1") // never ends its headers
		require.NoError(t, err)
		wg.Add(1)
		go func() {
			defer wg.Done()
			// A guard far beyond the server's timeout: the test fails
			// instead of hanging if the server keeps the connection.
			_ = c.SetReadDeadline(time.Now().Add(monitor.ServerReadHeaderTimeout + 50*time.Second))
			_, err := io.Copy(io.Discard, c) // returns when the server closes it
			closed <- err
		}()
	}
	wg.Wait()
	close(closed)
	for err := range closed {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			require.Fail(t, "the server kept a slowloris connection open")
		}
	}
}
