package agentdef_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/agentdef"
	"github.com/existence-loop/sdk/existence/budget"
	"github.com/existence-loop/sdk/existence/workflow"
)

// TestLoadAgentEcologyDefinition: agent_ecology's agent.yaml, as its
// documentation shows it, loads unchanged; starting_scrip is listed as
// ignored with its line; system_prompt.md is the role.
func TestLoadAgentEcologyDefinition(t *testing.T) {
	set, err := agentdef.Load("testdata/ecology", agentdef.Options{})
	require.NoError(t, err)
	require.Len(t, set.Agents, 2)

	alice := set.Agents[0]
	assert.Equal(t, "alice", alice.ID)
	assert.Equal(t, "alice", alice.Name, "the name defaults to the id")
	assert.True(t, alice.Enabled)
	assert.Equal(t, "gemini/gemini-3-flash-preview", alice.Model)
	require.NotNil(t, alice.Temperature)
	assert.InDelta(t, 0.7, *alice.Temperature, 1e-9)
	assert.Equal(t, 1000, alice.MaxTokens)
	assert.Equal(t, agentdef.RAG{Enabled: true, Limit: 5, QueryTemplate: "Current context. What should I do?"}, alice.RAG)
	assert.Equal(t, "You are alice, a trader in a small economy. Look for what others need.", alice.Role)
	assert.Nil(t, alice.Tools, "no tools key: every tool")
	assert.False(t, alice.WorkingMemory.Enabled, "off by default")

	arch := set.Agents[1]
	assert.Equal(t, "alpha_2", arch.ID)
	assert.Equal(t, 10*time.Second, arch.Heartbeat)
	assert.Equal(t, budget.Budget{Tokens: 4000, Window: time.Minute}, arch.Budget)
	assert.Equal(t, []string{"read_file", "list_files"}, arch.Tools)
	assert.Equal(t, agentdef.WorkingMemory{Enabled: true, MaxBytes: 1500}, arch.WorkingMemory)
	require.NotNil(t, arch.Workflow)
	assert.Equal(t, workflow.Continue, arch.Workflow.OnStepFailure)
	require.Len(t, arch.Workflow.Steps, 3)
	assert.Equal(t, workflow.Code, arch.Workflow.Steps[0].Type)
	assert.Contains(t, arch.Workflow.Steps[1].Prompt, "Success rate: {{.Metrics.SuccessRate}}", "prompt_file read")
	assert.JSONEq(t, `{"type":"object","required":["assessment"],"properties":{"assessment":{"type":"string"}}}`, string(arch.Workflow.Steps[1].Schema))
	assert.Equal(t, &workflow.Condition{Every: 1}, arch.Workflow.Steps[2].When)

	var ignored []string
	for _, i := range set.Ignored {
		ignored = append(ignored, i.String())
	}
	assert.Equal(t, []string{
		filepath.Join("testdata", "ecology", "alice", "agent.yaml") + ":3: starting_scrip",
		filepath.Join("testdata", "ecology", "architect", "agent.yaml") + ":9: working_memory.include_in_rag",
	}, ignored)
}

// copyDef writes a definitions directory holding one agent, "a", whose
// agent.yaml is testdata/bad/NAME.
func copyDef(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "bad", name))
	require.NoError(t, err)
	dir := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(dir, "a"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a", "agent.yaml"), b, 0o644))
	return dir
}

// TestLoadRefusesBadDefinitions: each bad definition is refused with the
// file and the line, its kind matched with errors.Is, and no Set.
func TestLoadRefusesBadDefinitions(t *testing.T) {
	for _, tc := range []struct {
		file  string
		kind  error
		line  int
		about string // a part of the message
	}{
		{"wrong_type.yaml", agentdef.ErrType, 2, `wrong type: want a number, found a string "warm"`},
		{"duplicate_key.yaml", agentdef.ErrDuplicateKey, 3, "llm_model"},
		{"duplicate_ignored_key.yaml", agentdef.ErrDuplicateKey, 3, "starting_scrip"},
		{"misspelt_key.yaml", agentdef.ErrUnknownKey, 4, "limt"},
		{"step_key_misspelt.yaml", agentdef.ErrUnknownKey, 6, "promt"},
		{"unknown_step_type.yaml", agentdef.ErrInvalid, 8, `unknown step type "shell"`},
		{"unknown_action.yaml", agentdef.ErrInvalid, 6, `no action "execute_decision"`},
		{"missing_prompt_file.yaml", agentdef.ErrFile, 6, "prompts/nowhere.md"},
		{"bad_heartbeat.yaml", agentdef.ErrInvalid, 2, "heartbeat"},
		{"missing_id.yaml", agentdef.ErrInvalid, 0, "id: missing"},
		{"syntax.yaml", agentdef.ErrSyntax, 2, ""},
		{"bad_template.yaml", agentdef.ErrInvalid, 6, "prompt"},
		{"bad_failure.yaml", agentdef.ErrInvalid, 8, "on_step_failure"},
		{"goals_without_memory.yaml", agentdef.ErrInvalid, 9, "turn working_memory on"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			dir := copyDef(t, tc.file)
			set, err := agentdef.Load(dir, agentdef.Options{})
			require.Error(t, err)
			assert.Nil(t, set, "nothing starts")
			var de *agentdef.Error
			require.True(t, errors.As(err, &de), "%v", err)
			assert.ErrorIs(t, err, tc.kind)
			assert.Equal(t, filepath.Join(dir, "a", "agent.yaml"), de.File)
			assert.Equal(t, tc.line, de.Line, "%v", err)
			assert.Contains(t, err.Error(), tc.about)
			if tc.line > 0 {
				assert.Contains(t, err.Error(), filepath.Join(dir, "a", "agent.yaml")+":")
			}
		})
	}
}

// TestLoadRefusesLargeFilesAndEscapes: a 10 MB agent.yaml or prompt, and a
// symbolic link out of the definitions directory (the agent's folder, its
// agent.yaml, a prompt_file, system_prompt.md), are refused, naming the
// file and, for a file a key names, the line.
func TestLoadRefusesLargeFilesAndEscapes(t *testing.T) {
	outside := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(outside, "secret.md"), []byte("secret"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(outside, "agent.yaml"), []byte("id: eve\n"), 0o644))
	big := strings.Repeat("# padding\n", 1<<20) // 10 MiB

	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, a string) // a: the agent's folder
		kind  error
		file  string // relative to the definitions directory
		line  int
	}{
		{"10 MB agent.yaml", func(t *testing.T, a string) {
			write(t, filepath.Join(a, "agent.yaml"), "id: a\n"+big)
		}, agentdef.ErrTooLarge, "a/agent.yaml", 0},
		{"10 MB prompt_file", func(t *testing.T, a string) {
			write(t, filepath.Join(a, "agent.yaml"), "id: a\nworkflow:\n  steps:\n    - name: s\n      type: llm\n      prompt_file: big.md\n")
			write(t, filepath.Join(a, "big.md"), big)
		}, agentdef.ErrTooLarge, "a/agent.yaml", 6},
		{"prompt_file linked out", func(t *testing.T, a string) {
			write(t, filepath.Join(a, "agent.yaml"), "id: a\nworkflow:\n  steps:\n    - name: s\n      type: llm\n      prompt_file: p.md\n")
			require.NoError(t, os.Symlink(filepath.Join(outside, "secret.md"), filepath.Join(a, "p.md")))
		}, agentdef.ErrFile, "a/agent.yaml", 6},
		{"prompt_file path out", func(t *testing.T, a string) {
			write(t, filepath.Join(a, "agent.yaml"), "id: a\nworkflow:\n  steps:\n    - name: s\n      type: llm\n      prompt_file: ../../secret.md\n")
		}, agentdef.ErrFile, "a/agent.yaml", 6},
		{"system_prompt.md linked out", func(t *testing.T, a string) {
			write(t, filepath.Join(a, "agent.yaml"), "id: a\n")
			require.NoError(t, os.Symlink(filepath.Join(outside, "secret.md"), filepath.Join(a, "system_prompt.md")))
		}, agentdef.ErrFile, "a/system_prompt.md", 0},
		{"agent.yaml linked out", func(t *testing.T, a string) {
			require.NoError(t, os.Symlink(filepath.Join(outside, "agent.yaml"), filepath.Join(a, "agent.yaml")))
		}, agentdef.ErrFile, "a/agent.yaml", 0},
		{"folder linked out", func(t *testing.T, a string) {
			require.NoError(t, os.Remove(a))
			require.NoError(t, os.Symlink(outside, a))
		}, agentdef.ErrFile, "a", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			a := filepath.Join(dir, "a")
			require.NoError(t, os.Mkdir(a, 0o755))
			tc.setup(t, a)
			set, err := agentdef.Load(dir, agentdef.Options{})
			require.Error(t, err)
			assert.Nil(t, set)
			assert.ErrorIs(t, err, tc.kind)
			var de *agentdef.Error
			require.True(t, errors.As(err, &de), "%v", err)
			assert.Equal(t, filepath.Join(dir, filepath.FromSlash(tc.file)), de.File, "%v", err)
			assert.Equal(t, tc.line, de.Line, "%v", err)
			assert.NotContains(t, err.Error(), "secret\n", "nothing of the outside file is read")
		})
	}
}

// TestLoadReportsEveryProblem: two bad agents and a duplicate id are all
// reported at once.
func TestLoadReportsEveryProblem(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "a", "agent.yaml"), "id: same\n")
	write(t, filepath.Join(dir, "b", "agent.yaml"), "id: same\n")
	write(t, filepath.Join(dir, "c", "agent.yaml"), "id: c\nmax_tokens: many\n")
	write(t, filepath.Join(dir, "README.md"), "plain files at the top are skipped\n")
	_, err := agentdef.Load(dir, agentdef.Options{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), filepath.Join(dir, "b", "agent.yaml")+":1: id \"same\" is also the id of "+filepath.Join(dir, "a", "agent.yaml"))
	assert.Contains(t, err.Error(), filepath.Join(dir, "c", "agent.yaml")+":2:")
}

// TestLoadActionsRegisteredByTheCaller: a code step may name an action the
// caller registers.
func TestLoadActionsRegisteredByTheCaller(t *testing.T) {
	dir := copyDef(t, "unknown_action.yaml")
	_, err := agentdef.Load(dir, agentdef.Options{Actions: []string{"execute_decision"}})
	require.NoError(t, err)
}

func write(t *testing.T, path, text string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, []byte(text), 0o644))
}
