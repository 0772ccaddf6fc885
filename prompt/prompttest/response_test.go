package prompttest_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/prompt"
	"github.com/existence-loop/sdk/prompt/prompttest"
)

const goodResponse = `<think>hmm</think>
{"action": "goal", "content": "read existence.py", "reasoning": "it decides everything",
 "new_opinions": [{"opinion": "read first", "domain": "process"}]}`

func TestMustParse(t *testing.T) {
	r := prompttest.MustParse(t, goodResponse)
	assert.Equal(t, "read existence.py", r.Content)
	assert.Equal(t, "goal", r.Action)
	require.Len(t, r.NewOpinions, 1)

	f := &fakeTB{}
	assert.Nil(t, prompttest.MustParse(f, "no json here"))
	assert.True(t, f.fatal)
	assert.Contains(t, f.errs[0], "ErrNoJSON")
}

func TestParseFails(t *testing.T) {
	pe := prompttest.ParseFails(t, `{"content": "x", "reasoning": "y", "new_opinions": [{"domain": "d"}]}`, prompt.ErrSchema)
	require.NotNil(t, pe)
	assert.Equal(t, "/new_opinions/0/opinion", pe.Pointer)

	prompttest.ParseFails(t, strings.Repeat(" ", prompt.MaxResponseBytes+1), prompt.ErrTooLarge)
	prompttest.ParseFails(t, "I would like to read the code.", prompt.ErrNoJSON)
	prompttest.ParseFails(t, `{"content": "cut off`, prompt.ErrSyntax)

	// Failures of the assertion itself.
	f := &fakeTB{}
	assert.Nil(t, prompttest.ParseFails(f, goodResponse, prompt.ErrSchema))
	assert.Contains(t, f.errs[0], "parsed, want")
	f = &fakeTB{}
	assert.Nil(t, prompttest.ParseFails(f, "nothing", prompt.ErrSchema))
	assert.Contains(t, f.errs[0], "got ErrNoJSON")
}

func TestParseFiles(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a.txt"), []byte(goodResponse), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "b.txt"), []byte("```json\n{\"content\": \"b\", \"reasoning\": \"r\"}\n```"), 0o644))
	rs := prompttest.ParseFiles(t, filepath.Join(dir, "*.txt"))
	require.Len(t, rs, 2)
	assert.Equal(t, "read existence.py", rs[0].Content)
	assert.Equal(t, "b", rs[1].Content)

	require.NoError(t, os.WriteFile(filepath.Join(dir, "c.txt"), []byte("garbage"), 0o644))
	f := &fakeTB{}
	rs = prompttest.ParseFiles(f, filepath.Join(dir, "*.txt"))
	require.Len(t, rs, 3)
	assert.Nil(t, rs[2])
	require.Len(t, f.errs, 1)
	assert.Contains(t, f.errs[0], "c.txt")

	f = &fakeTB{}
	assert.Nil(t, prompttest.ParseFiles(f, filepath.Join(dir, "*.none")))
	assert.Contains(t, f.errs[0], "no file matches")
}
