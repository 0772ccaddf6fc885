package hostaccess_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/existence"
	"github.com/existence-loop/sdk/hostaccess"
	"github.com/existence-loop/sdk/llm/llmtest"
	"github.com/existence-loop/sdk/store/memstore"
)

func TestLoopback(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1:8080": true, "127.9.9.9:1": true, "[::1]:80": true, "localhost:80": true, "LOCALHOST:80": true,
		":8080": false, "0.0.0.0:80": false, "[::]:80": false, "10.0.0.1:80": false, "localhost": false,
		"example.com:80": false, "foo.localhost:80": false, "[::ffff:127.0.0.1]:80": true,
	} {
		assert.Equal(t, want, hostaccess.Loopback(addr), addr)
	}
}

// TestGenerateToken: generated tokens are 43 URL-safe characters, pass
// CheckToken, and differ.
func TestGenerateToken(t *testing.T) {
	a, b := hostaccess.GenerateToken(), hostaccess.GenerateToken()
	assert.Len(t, a, 43)
	assert.Regexp(t, `^[A-Za-z0-9_-]+$`, a)
	assert.NotEqual(t, a, b)
	require.NoError(t, hostaccess.CheckToken(a))
	require.ErrorIs(t, hostaccess.CheckToken("               x"), hostaccess.ErrWeakToken, "15 spaces and one x")
}

// TestCheckTokenVariety: a token long enough but of one repeated letter,
// a few letters, or a run of consecutive ones is refused, saying which
// rule failed and that a generated token is better; random tokens of 16
// characters and more pass.
func TestCheckTokenVariety(t *testing.T) {
	tests := []struct{ token, want string }{
		{strings.Repeat("a", 16), "it has 1 different characters, want at least 8"},
		{strings.Repeat("a", 100), "it has 1 different characters"},
		{strings.Repeat("abc", 10), "it has 3 different characters"},
		{"abcdefghijklmnop", "mostly a run of repeated or consecutive characters (15 of its 15"},
		{"1234567890123456", "mostly a run"},
		{"aaaaaaaaaaaaaaaaaaaaaaaaaaaa5x9Kq7wZ", "mostly a run"},
	}
	for _, tc := range tests {
		err := hostaccess.CheckToken(tc.token)
		require.ErrorIs(t, err, hostaccess.ErrWeakToken, tc.token)
		assert.Contains(t, err.Error(), tc.want, tc.token)
		assert.Contains(t, err.Error(), "GenerateToken", tc.token)
	}
	for _, ok := range []string{"f3a9c01e7b2d8645", "correct horse battery staple", "8c1f0b7e2a94d36f5e0a1b2c3d4e5f60"} {
		assert.NoError(t, hostaccess.CheckToken(ok), ok)
	}
	for range 1000 {
		require.NoError(t, hostaccess.CheckToken(hostaccess.GenerateToken()))
	}
}

// TestAuthMiddlewareGuardsOtherHandlers: a handler behind the middleware
// (an MCP or A2A endpoint) is reached with the bearer token and an allowed
// host only; a refusal is a JSON error with the status, and a 401 carries
// the bearer challenge.
func TestAuthMiddlewareGuardsOtherHandlers(t *testing.T) {
	a := hostaccess.NewAuth(hostaccess.AuthConfig{Token: "t"})
	h := a.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(204) }))
	tests := []struct {
		name, host string
		header     map[string]string
		want       int
		challenge  bool
	}{
		{"token", "localhost:8080", map[string]string{"Authorization": "Bearer t"}, 204, false},
		{"token, host not allowed", "evil.example", map[string]string{"Authorization": "Bearer t"}, 421, false},
		{"no token", "", nil, 401, true},
		{"wrong token", "", map[string]string{"Authorization": "Bearer u"}, 401, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := serve(h, "POST", "/mcp", tc.host, tc.header)
			require.Equal(t, tc.want, w.Code)
			if tc.want == 204 {
				return
			}
			assert.Equal(t, "application/json", w.Header().Get("Content-Type"))
			var body hostaccess.ErrorBody
			require.NoError(t, json.Unmarshal(w.Body.Bytes(), &body))
			assert.NotEmpty(t, body.Error)
			assert.Equal(t, tc.challenge, w.Header().Get("WWW-Authenticate") != "")
		})
	}
}

// TestSingle: Single shows one agent, finds it by its id only, and
// refuses a host message to another id.
func TestSingle(t *testing.T) {
	ctx := context.Background()
	a, err := existence.New(ctx, existence.Config{ID: "scout", Name: "Cedar", Model: llmtest.NewFake(), Store: memstore.New()})
	require.NoError(t, err)
	s := hostaccess.Single(a)
	assert.Equal(t, []*existence.Agent{a}, s.Agents())
	assert.Same(t, a, s.Agent("scout"))
	assert.Nil(t, s.Agent("other"))
	err = s.SayAsHost(ctx, "hello", "other")
	require.Error(t, err)
	assert.Contains(t, err.Error(), `no agent "other"`)
	require.NoError(t, s.SayAsHost(ctx, "hello", "scout"))
	require.NoError(t, s.SayAsHost(ctx, "hello again"))
}

// serve runs h on one request and returns the answer.
func serve(h http.Handler, method, target, host string, header map[string]string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, target, strings.NewReader("{}"))
	r.Host = "127.0.0.1:8080"
	if host != "" {
		r.Host = host
	}
	for k, v := range header {
		r.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}
