package runner_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/existence"
	"github.com/existence-loop/sdk/existence/runner"
	"github.com/existence-loop/sdk/llm/llmtest"
	"github.com/existence-loop/sdk/store/memstore"
)

// TestAddRefusesADuplicateID: a second agent of an id is refused with
// ErrDuplicateAgent, and the first stays.
func TestAddRefusesADuplicateID(t *testing.T) {
	ctx := context.Background()
	r, err := runner.New(runner.Config{Store: memstore.New()})
	require.NoError(t, err)
	model := llmtest.NewFake()
	_, err = r.Add(ctx, existence.Config{ID: "scout", Name: "Cedar", Model: model})
	require.NoError(t, err)
	_, err = r.Add(ctx, existence.Config{ID: "scout", Name: "Cedar", Model: model})
	require.ErrorIs(t, err, runner.ErrDuplicateAgent)
	require.ErrorContains(t, err, `"scout"`)
	require.NotNil(t, r.Agent("scout"))
}
