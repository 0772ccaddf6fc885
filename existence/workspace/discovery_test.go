package workspace_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/existence/toolloop"
	"github.com/existence-loop/sdk/existence/workspace"
	"github.com/existence-loop/sdk/identity"
)

func TestDescribe(t *testing.T) {
	long := strings.Repeat("é", 200)
	tests := []struct {
		name, content, want string
	}{
		{"heading", "# Index of designs\n\n- a.md\n", `first line "# Index of designs"`},
		{"no final newline", "just one line", `first line "just one line"`},
		{"leading blank lines", "\n  \n\t\r\n  Title here  \nbody", `first line "Title here"`},
		{"inner white space flattened", "a\t\tb   c\u00a0d\r\n", `first line "a b c d"`},
		{"control characters", "\x1b[31mred\x1b[0m\x00!", `first line "[31mred [0m !"`},
		{"byte order mark", "\ufeff# Title", `first line "# Title"`},
		{"quotes kept", `say "hi"`, `first line "say "hi""`},
		{"empty", "", "(empty file)"},
		{"only white space", " \n\t\n\r\n", "(empty file)"},
		{"exactly the cap", strings.Repeat("x", 160), `first line "` + strings.Repeat("x", 160) + `"`},
		{"over the cap, by code point", long, `first line "` + strings.Repeat("é", 159) + `…"`},
		{"cut after a space", strings.Repeat("x", 158) + " y z", `first line "` + strings.Repeat("x", 158) + `…"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, workspace.Describe(tt.content))
		})
	}
}

func TestReadFileReportsDiscoveries(t *testing.T) {
	e := newEnv(t, workspace.Limits{MaxReadBytes: 64})
	require.NoError(t, e.ws.Write("design/index.md", "\n# Index of designs\n- a.md\n"))
	require.NoError(t, e.ws.Write("design/big.md", strings.Repeat("b", 65)))
	ctx, discoveries := toolloop.CollectDiscoveries(context.Background())
	for _, p := range []string{"./design//index.md", "design/big.md", "missing.md", "design", "../x"} {
		_, _ = e.tools["read_file"].Call(ctx, json.RawMessage(`{"path":"`+p+`"}`))
	}
	_, err := e.tools["list_files"].Call(ctx, json.RawMessage(`{"path":"design"}`))
	require.NoError(t, err)
	assert.Equal(t, []identity.Discovery{
		{Text: `first line "# Index of designs"`, Source: "design/index.md"},
	}, discoveries(), "one discovery per successful read, under the cleaned path")
}

func FuzzDescribe(f *testing.F) {
	for _, s := range []string{
		"# Title\n", "", "\n\n\n", "\ufeff\r\n---\ntitle: x\n", "\x00\x01\x02", "a\u2028b\u2029c",
		strings.Repeat("語", 300), "\xff\xfe broken", strings.Repeat(" \t", 100) + "x",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, content string) {
		got := workspace.Describe(content)
		require.True(t, got == "(empty file)" || strings.HasPrefix(got, `first line "`), "%q: unexpected form", got)
		require.True(t, utf8.ValidString(got), "%q: not UTF-8", got)
		require.LessOrEqual(t, utf8.RuneCountInString(got), len(`first line ""`)+workspace.DiscoveryLineChars, "%q: characters", got)
		for _, r := range got {
			require.False(t, r != ' ' && (unicode.IsSpace(r) || !unicode.IsPrint(r)), "%q: contains %U", got, r)
		}
	})
}
