package ollama

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseHost(t *testing.T) {
	tests := []struct {
		in, want, err string
	}{
		{in: "localhost", want: "http://localhost:11434"},
		{in: "localhost:9999", want: "http://localhost:9999"},
		{in: "0.0.0.0", want: "http://0.0.0.0:11434"},
		{in: "[::1]", want: "http://[::1]:11434"},
		{in: "http://example.com", want: "http://example.com"},
		{in: "https://example.com:8443/base/", want: "https://example.com:8443/base"},
		{in: "example.com/ollama", want: "http://example.com:11434/ollama"},
		{in: "unix:///tmp/sock", err: `scheme "unix"`},
		{in: "http://user:pw@h", err: "no user info"},
		{in: "http://h?x=1", err: "no user info, query"},
		{in: "://x", err: "scheme"},
	}
	for _, tc := range tests {
		u, err := parseHost(tc.in)
		if tc.err != "" {
			if assert.Error(t, err, tc.in) {
				assert.Contains(t, err.Error(), tc.err, tc.in)
			}
			continue
		}
		if assert.NoError(t, err, tc.in) {
			assert.Equal(t, tc.want, u.String(), tc.in)
		}
	}
}

func FuzzParseHost(f *testing.F) {
	for _, s := range []string{"localhost", "0.0.0.0:11434", "http://[::1]:1/x", "https://a/b/", "%zz", "http://", "::", "[::1", "http://h:99999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		u, err := parseHost(s)
		if err != nil {
			return
		}
		require.Contains(t, []string{"http", "https"}, u.Scheme, "parseHost(%q) = %q: accepted without an http(s) scheme", s, u)
		require.NotEmpty(t, u.Hostname(), "parseHost(%q) = %q: accepted without a host", s, u)
	})
}

func TestHonoursTruncateVersions(t *testing.T) {
	for v, want := range map[string]bool{
		"0.12.6": true, "0.17.4": true, "v0.13.0": true, "0.30.1-rc2": true, "1.0.0": true,
		"0.12.5": false, "0.3.0": false, "0.0.0": false, "": false, "dev": false, "0.12": false,
	} {
		assert.Equal(t, want, honoursTruncate(v), v)
	}
}
