package ollama_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/llm/ollama"
)

// TestURLNeedsHostAndPort: a URL without a host, or with an empty port, is
// refused with a clear error instead of going to port 80.
func TestURLNeedsHostAndPort(t *testing.T) {
	tests := []struct {
		url  string
		want string // "" = accepted
	}{
		{"http://127.0.0.1:", "empty port"},
		{"127.0.0.1:", "empty port"},
		{"http://[::1]:", "empty port"},
		{"http://:11434", "no host"},
		{"http://", "no host"},
		{"http://127.0.0.1:11434", ""},
		{"http://127.0.0.1", ""},
		{"127.0.0.1", ""},
	}
	for _, tt := range tests {
		_, err := ollama.New(ollama.Config{URL: tt.url, Model: "m"})
		if tt.want == "" {
			require.NoError(t, err, tt.url)
			continue
		}
		require.Error(t, err, tt.url)
		assert.Contains(t, err.Error(), tt.want, tt.url)
	}
}
