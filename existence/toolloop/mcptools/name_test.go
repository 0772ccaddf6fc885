package mcptools

import (
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestModelName(t *testing.T) {
	valid := regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)
	long := strings.Repeat("x", 80)
	tests := []struct{ server, tool, want string }{
		{"fs", "read_file", "fs__read_file"},
		{"fs", "read-file", "fs__read-file"},
		{"fs", "files.read", "fs__files_read_"},    // + hash
		{"fs", "files/read", "fs__files_read_"},    // + another hash
		{"fs", long, "fs__" + long[:64-4-9] + "_"}, // cut + hash
	}
	seen := map[string]bool{}
	for _, tc := range tests {
		got := modelName(tc.server, tc.tool)
		assert.True(t, valid.MatchString(got), got)
		assert.True(t, strings.HasPrefix(got, tc.want), "%s: %s", tc.tool, got)
		assert.False(t, seen[got], "collision: %s", got)
		seen[got] = true
	}
	assert.Equal(t, modelName("fs", "a.b"), modelName("fs", "a.b"), "stable")
	assert.NotEqual(t, modelName("fs", "a.b"), modelName("fs", "a_b"))
}

func TestInputSchema(t *testing.T) {
	tests := []struct {
		in   any
		want string
		err  bool
	}{
		{in: nil, want: `{"type":"object","properties":{}}`},
		{in: map[string]any{"$schema": "http://json-schema.org/draft-07/schema#", "type": "object"}, want: `{"type":"object"}`},
		{in: map[string]any{"type": "string"}, err: true},
		{in: []any{1}, err: true},
		{in: map[string]any{"type": "object", "properties": map[string]any{"a": map[string]any{"type": 5}}}, err: true},
	}
	for _, tc := range tests {
		got, err := inputSchema(tc.in)
		if tc.err {
			assert.ErrorIs(t, err, ErrMalformed, "%v", tc.in)
			continue
		}
		assert.NoError(t, err)
		assert.JSONEq(t, tc.want, string(got))
	}
}
