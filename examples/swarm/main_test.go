package main

import (
	"bytes"
	"context"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRun runs 50 agents briefly and checks the figure it prints: every
// agent cycled.
func TestRun(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), 50, 100*time.Millisecond, 500*time.Millisecond, 4, &out))
	m := regexp.MustCompile(`^50 agents, (\d+) existence cycles in [\d.]+ s: [\d.]+ cycles/s`).FindStringSubmatch(out.String())
	require.NotNil(t, m, out.String())
	n, err := strconv.Atoi(m[1])
	require.NoError(t, err)
	assert.GreaterOrEqual(t, n, 50, "every agent cycled")
}
