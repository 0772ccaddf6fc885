package middleware_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/llm"
	"github.com/existence-loop/sdk/llm/llmtest"
	"github.com/existence-loop/sdk/llm/middleware"
)

// named gives a model a name, as the adapters have.
type named struct {
	llm.Model
	name string
}

func (n named) Name() string { return n.name }

func TestFallbackOrder(t *testing.T) {
	hosted := llmtest.NewFake(llmtest.Reply{Err: status(503)})
	local := llmtest.NewFake(llmtest.Reply{Text: "from local"})
	resp, err := middleware.Fallback(hosted, local).Generate(context.Background(), &llm.Request{})
	require.NoError(t, err)
	assert.Equal(t, "from local", resp.Text)
	assert.Equal(t, 1, hosted.Calls())
	assert.Equal(t, 1, local.Calls())

	first := llmtest.NewFake(llmtest.Reply{Text: "from first"})
	second := llmtest.NewFake()
	resp, err = middleware.Fallback(first, second).Generate(context.Background(), &llm.Request{})
	require.NoError(t, err)
	assert.Equal(t, "from first", resp.Text)
	assert.Equal(t, 0, second.Calls(), "no fall-through after a success")
}

func TestFallbackFallsThroughPermanentErrors(t *testing.T) {
	a := llmtest.NewFake(llmtest.Reply{Err: &llm.ModelNotFoundError{Provider: "openai", Model: "gpt"}})
	b := llmtest.NewFake(llmtest.Reply{Text: "ok"})
	_, err := middleware.Fallback(a, b).Generate(context.Background(), &llm.Request{})
	require.NoError(t, err)
}

func TestFallbackAllFail(t *testing.T) {
	e1 := &llm.ModelNotFoundError{Provider: "openai", Model: "gpt"}
	e2 := status(503)
	e3 := &llm.UnavailableError{Provider: "ollama", URL: "http://127.0.0.1:11434", Hint: "start it with `ollama serve`", Err: errors.New("connection refused")}
	m := middleware.Fallback(
		named{llmtest.NewFake(llmtest.Reply{Err: e1}), "hosted"},
		llmtest.NewFake(llmtest.Reply{Err: e2}),
		named{llmtest.NewFake(llmtest.Reply{Err: e3}), "local"},
	)
	_, err := m.Generate(context.Background(), &llm.Request{})
	require.Error(t, err)
	for _, want := range []error{e1, e2, e3, llm.ErrModelNotFound, llm.ErrUnavailable} {
		assert.ErrorIs(t, err, want)
	}
	var fe *middleware.FallbackError
	require.ErrorAs(t, err, &fe)
	require.Len(t, fe.Errs, 3)
	assert.Equal(t, "unavailable", middleware.Classify(err), "classified by the last model's error")
	assert.True(t, middleware.Retryable(err))
	assert.Equal(t, "llm: all 3 models failed\n"+
		`hosted: openai: model "gpt" not found`+"\n"+
		"model 2: test: HTTP 503: x\n"+
		"local: ollama: cannot reach http://127.0.0.1:11434: connection refused (start it with `ollama serve`)",
		err.Error())
}

func TestFallbackStopsOnCallerCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	a := llmtest.Func(func(context.Context, *llm.Request) (*llm.Response, error) {
		cancel()
		return nil, context.Canceled
	})
	b := llmtest.NewFake(llmtest.Reply{Text: "never"})
	_, err := middleware.Fallback(a, b).Generate(ctx, &llm.Request{})
	require.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, 0, b.Calls())

	// Cancelled while the second model runs: the first model's error is kept.
	ctx, cancel = context.WithCancel(context.Background())
	c := llmtest.Func(func(context.Context, *llm.Request) (*llm.Response, error) {
		cancel()
		return nil, context.Canceled
	})
	d := llmtest.NewFake(llmtest.Reply{Text: "never"})
	_, err = middleware.Fallback(llmtest.NewFake(llmtest.Reply{Err: status(503)}), c, d).Generate(ctx, &llm.Request{})
	require.ErrorIs(t, err, context.Canceled)
	assert.ErrorIs(t, err, status(503))
	assert.Equal(t, "canceled", middleware.Classify(err))
	assert.Equal(t, 0, d.Calls())
}

func TestFallbackNoModels(t *testing.T) {
	_, err := middleware.Fallback().Generate(context.Background(), &llm.Request{})
	require.Error(t, err)
}
