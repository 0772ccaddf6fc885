package cli

import (
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestProviderModelAndURL: -provider openai needs -model (the Ollama
// default would be sent to another server), and URLs with an empty port
// or no host are refused with a clear error.
func TestProviderModelAndURL(t *testing.T) {
	t.Setenv("OPENAI_BASE_URL", "")
	_, err := parseRunFlags([]string{"-provider", "openai", "-llm-url", "http://127.0.0.1:8080/v1"}, io.Discard)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "-provider openai needs -model")

	o, err := parseRunFlags([]string{"-provider", "openai", "-llm-url", "http://127.0.0.1:8080/v1", "-model", "qwen3.5-9b"}, io.Discard)
	require.NoError(t, err)
	assert.Equal(t, "qwen3.5-9b", o.model)

	o, err = parseRunFlags([]string{"-provider", "ollama"}, io.Discard)
	require.NoError(t, err)
	assert.Equal(t, defaultOllamaModel, o.model)

	for _, tt := range []struct{ provider, url, want string }{
		{"ollama", "http://127.0.0.1:", "empty port"},
		{"ollama", "http://:11434", "no host"},
		{"openai", "http://127.0.0.1:/v1", "empty port"},
		{"openai", "http://:8080/v1", "no host"},
	} {
		o, err := parseRunFlags([]string{"-provider", tt.provider, "-llm-url", tt.url, "-model", "m"}, io.Discard)
		require.NoError(t, err)
		_, _, err = newModel(o)
		require.Error(t, err, tt.url)
		assert.Contains(t, err.Error(), tt.want, tt.url)
	}
}
