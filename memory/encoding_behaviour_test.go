package memory_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/llm/llmtest"
	"github.com/existence-loop/sdk/memory"
)

// Events and records encode as documented: an event carries its error's
// text (Error), not the error; a record's vector stays out of JSON (its
// model and dimensions say it has one).
func TestEventAndRecordJSON(t *testing.T) {
	emb := llmtest.NewFakeEmbedder("", 8)
	emb.Fail(down)
	m, _, ev := newMemory(t, memory.Config{Embedder: emb, NoBackfill: true})
	_, err := m.Remember(t.Context(), "scout", memory.Note{Text: "stored while the embedder is down", Fact: "embedder.state"})
	require.NoError(t, err)
	p := ev.wait(t, memory.EventPending)
	b, err := json.Marshal(p)
	require.NoError(t, err)
	var got map[string]any
	require.NoError(t, json.Unmarshal(b, &got))
	assert.Equal(t, "memory_pending", got["kind"])
	assert.Equal(t, "scout", got["agent_id"])
	assert.Equal(t, "unavailable", got["cause"])
	assert.Equal(t, p.Err.Error(), got["error"], "the error's text")
	assert.NotContains(t, got, "Err")

	emb.Fail(nil)
	n, err := m.Backfill(t.Context(), "scout") // ends the backoff
	require.NoError(t, err)
	require.Equal(t, 1, n)
	r, err := m.Remember(t.Context(), "scout", memory.Note{Text: "stored once the embedder is back"})
	require.NoError(t, err)
	require.False(t, r.Pending())
	b, err = json.Marshal(r)
	require.NoError(t, err)
	got = nil
	require.NoError(t, json.Unmarshal(b, &got))
	assert.NotContains(t, got, "vector", "vectors stay out of JSON")
	assert.NotContains(t, got, "Vector")
	assert.Equal(t, 8.0, got["dimensions"])
	assert.Equal(t, llmtest.DefaultFakeEmbedModel, got["model"])
	var back memory.Record
	require.NoError(t, json.Unmarshal(b, &back))
	back.Vector = r.Vector
	assert.Equal(t, r, back, "a record round-trips but for its vector")
}
