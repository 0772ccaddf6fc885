package origin

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAllowed(t *testing.T) {
	base, _ := url.Parse("http://Model.example:8080/v1")
	p := New(base, []string{" Other.example ", "third.example:9000"})
	for _, tc := range []struct {
		to   string
		want bool
	}{
		{"http://model.example:8080/api/chat", true},
		{"http://MODEL.example:8080/x", true},
		{"https://model.example:8080/x", false}, // another scheme
		{"http://model.example:8081/x", false},  // another port
		{"http://model.example/x", false},       // port 80
		{"http://127.0.0.1:8080/x", false},      // another host
		{"http://other.example:1/x", true},      // allowed host, any port
		{"http://third.example:9000/x", true},   // allowed host and port
		{"http://third.example:9001/x", false},
	} {
		u, _ := url.Parse(tc.to)
		assert.Equal(t, tc.want, p.Allowed(u), tc.to)
	}
	def, _ := url.Parse("https://api.example/v1")
	same, _ := url.Parse("https://api.example:443/v2")
	assert.True(t, New(def, nil).Allowed(same), "a default port counts as given")
}

// TestClientRefusesOtherOrigin: a 307 to another origin is not followed,
// the target receives nothing, and the error says why; a redirect on the
// origin is followed.
func TestClientRefusesOtherOrigin(t *testing.T) {
	var reached atomic.Int64
	target := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { reached.Add(1) }))
	t.Cleanup(target.Close)
	src := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/here" {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		if r.URL.Path == "/local" {
			http.Redirect(w, r, "/here", http.StatusTemporaryRedirect)
			return
		}
		http.Redirect(w, r, target.URL+"/api/chat", http.StatusTemporaryRedirect)
	}))
	t.Cleanup(src.Close)
	base, _ := url.Parse(src.URL)
	own := 0
	hc := New(base, nil).Client(&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { own++; return nil }})

	resp, err := hc.Post(src.URL+"/api/chat", "application/json", strings.NewReader(`{}`))
	require.Error(t, err)
	require.ErrorIs(t, err, ErrRedirect)
	var re *RedirectError
	require.True(t, errors.As(err, &re))
	assert.Contains(t, err.Error(), "redirect to "+target.URL+"/api/chat refused: other origin than "+src.URL)
	assert.Zero(t, reached.Load(), "the target receives nothing")
	if resp != nil {
		resp.Body.Close()
	}

	resp, err = hc.Get(src.URL + "/local")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusNoContent, resp.StatusCode, "a redirect on the origin is followed")
	assert.Equal(t, 1, own, "the client's own CheckRedirect still runs")
}
