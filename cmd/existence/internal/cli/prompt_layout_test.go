package cli

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/llm/llmtest"
)

// TestTrioCycleCacheShare: the trio with the cache layout against a
// stand-in that keeps 4 prompts' KV cache (Ollama's slot policy) reads
// most of its cycle prompts from the cache, as one slot serves each
// agent's cycle and tool loop; with the original layout almost nothing.
func TestTrioCycleCacheShare(t *testing.T) {
	share := func(layout string) float64 {
		t.Chdir(t.TempDir())
		s := llmtest.NewServer(llmtest.ServerConfig{CacheSlots: 4, Reply: llmtest.ScriptedReply, Record: true})
		url := s.Start()
		t.Cleanup(s.Close)
		_, stderr, err := runTrioTest(t, trioArgs(t, url, "-cycles", "6", "-prompt-layout", layout)...)
		require.NoError(t, err, stderr)
		cached, all := 0, 0
		for _, c := range s.Calls() {
			if len(c.Format) > 0 {
				cached, all = cached+c.Cached, all+c.Kept
			}
		}
		require.Positive(t, all)
		return float64(cached) / float64(all)
	}
	orig, cache := share("original"), share("cache")
	t.Logf("cycle prompt tokens from the cache: original %.1f%%, cache %.1f%%", 100*orig, 100*cache)
	assert.Less(t, orig, 0.2)
	assert.GreaterOrEqual(t, cache, 0.6)
}
