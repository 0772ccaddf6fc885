package openai_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/llm/openai"
)

// TestBaseURLNeedsHostAndPort: a base URL without a host, or with an empty
// port, is refused with a clear error instead of going to port 80.
func TestBaseURLNeedsHostAndPort(t *testing.T) {
	tests := []struct {
		url  string
		want string // "" = accepted
	}{
		{"http://127.0.0.1:", "empty port"},
		{"http://127.0.0.1:/v1", "empty port"},
		{"https://[::1]:/v1", "empty port"},
		{"http://:8080/v1", "has no host"},
		{"http:///v1", "has no host"},
		{"127.0.0.1:8080/v1", "not an http:// or https:// URL"},
		{"http://127.0.0.1:8080/v1", ""},
		{"https://api.example.com/v1", ""},
	}
	for _, tt := range tests {
		_, err := openai.New(openai.Config{BaseURL: tt.url, Model: "m"})
		if tt.want == "" {
			require.NoError(t, err, tt.url)
			continue
		}
		require.Error(t, err, tt.url)
		assert.Contains(t, err.Error(), tt.want, tt.url)
	}
}
