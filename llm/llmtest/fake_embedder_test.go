package llmtest_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/llm"
	"github.com/existence-loop/sdk/llm/llmtest"
)

func TestFakeEmbedder(t *testing.T) {
	f := llmtest.NewFakeEmbedder("", 0)
	assert.Equal(t, llmtest.DefaultFakeEmbedModel, f.Model())
	assert.Equal(t, 768, f.Dimensions())

	vecs, err := f.Embed(t.Context(), []string{"alpha beta", "alpha beta", "gamma"})
	require.NoError(t, err)
	require.Len(t, vecs, 3)
	assert.Equal(t, llmtest.Embedding("alpha beta", 768), vecs[0])
	assert.Equal(t, vecs[0], vecs[1], "the same text, the same vector")

	down := &llm.UnavailableError{Provider: "ollama", URL: "http://127.0.0.1:11434", Err: context.DeadlineExceeded}
	busy := llm.StatusError{Provider: "ollama", StatusCode: 503}
	f.FailNext(busy)
	f.Fail(down)
	_, err = f.Embed(t.Context(), []string{"x"})
	require.ErrorAs(t, err, new(llm.StatusError), "FailNext comes first")
	_, err = f.Embed(t.Context(), []string{"x"})
	require.ErrorIs(t, err, llm.ErrUnavailable, "then Fail, on every call")
	f.Fail(nil)
	_, err = f.Embed(t.Context(), []string{"x"})
	require.NoError(t, err)

	f.Hang(true)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err = f.Embed(ctx, []string{"x"})
	require.ErrorIs(t, err, context.Canceled)

	calls, texts := f.Calls()
	assert.Equal(t, 5, calls)
	assert.Equal(t, 4, texts, "texts embedded by the calls that succeeded")
}
