package cli

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/existence"
	"github.com/existence-loop/sdk/existence/toolloop"
	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/llm"
)

// TestFitTurn: at start, a context window that cannot hold a tool-loop
// turn's fixed part and its reply's reserve is said, with the reserve
// shrunk to what is left when that is enough for a reply, else with the
// window that would do; a window that holds both, or none given, changes
// nothing and says nothing.
func TestFitTurn(t *testing.T) {
	exec, err := toolloop.New(toolloop.Config{World: strings.Repeat("A shared workspace of notes, maps and ledgers kept by three agents. ", 80)})
	require.NoError(t, err)
	fixed := exec.FixedTokens(existence.Assignment{AgentName: "Cedar", Goal: identity.Goal{Objective: "map the workspace and write down what it holds, with paths"}}, llm.NewTokenEstimator())
	require.Greater(t, fixed, 1200, "a fixed part large enough that a quarter of the window exceeds what is left")
	for _, tc := range []struct {
		name    string
		window  int
		reserve int
		ok      bool
		says    string
	}{
		{"no window given", 0, 2000, true, ""},
		{"room for both", fixed*2 + 2000, 2000, true, ""},
		{"the reserve shrinks", fixed + fixed/16 + 300, 300, true, "the reserve is shrunk to 300 tokens"},
		{"no room for a reply", fixed + fixed/16 + 100, 2000, false, "its goals will fail"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var w bytes.Buffer
			reserve, ok := fitTurn(&w, tc.window, exec, "Cedar", 2000)
			assert.Equal(t, tc.reserve, reserve)
			assert.Equal(t, tc.ok, ok)
			if tc.says == "" {
				assert.Empty(t, w.String())
				return
			}
			assert.Contains(t, w.String(), tc.says)
			assert.Contains(t, w.String(), "cannot hold a tool-loop turn's fixed part")
		})
	}
}
