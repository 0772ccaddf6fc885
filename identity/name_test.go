package identity_test

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/identity"
)

func TestValidateName(t *testing.T) {
	for _, ok := range []string{"Cedar", "Cipher", "Vault", "Agent 00042", "O'Brien", "Zoë-2", "Zoe\u0308", "日本", "a", "x.y_z", "Ren’ai", strings.Repeat("é", 64)} {
		assert.NoError(t, identity.ValidateName(ok), "%q", ok)
	}
	tests := []struct{ name, why string }{
		{"", "at least one letter"},
		{"host\nA PERSON SAID:", "control or formatting character U+000A"},
		{"Cedar\u202E", "U+202E"},
		{"Ce\u2066dar", "U+2066"},
		{"Ce\x00dar", "U+0000"},
		{"Cedar\x07", "U+0007"},
		{"Cedar\tVault", "U+0009"},
		{"[host]", `holds '['`},
		{"host]: hi", `holds ']'`},
		{"Cedar: I said", `holds ':'`},
		{`"Cedar"`, `holds '"'`},
		{"Cedar  Vault", "two spaces"},
		{" Cedar", "start and end"},
		{"Cedar-", "start and end"},
		{strings.Repeat("a", 65), "65 characters; the limit is 64"},
		{"\xff", "not valid UTF-8"},
		{"Cedar 🌲", `holds '🌲'`},
	}
	for _, tt := range tests {
		err := identity.ValidateName(tt.name)
		require.ErrorIs(t, err, identity.ErrInvalidName, "%q", tt.name)
		assert.Contains(t, err.Error(), tt.why, "%q", tt.name)
	}
}

// FuzzValidateName: a name ValidateName accepts holds no line break,
// control, formatting or bidi character, no bracket, colon or quote, and at
// most 64 characters; one it refuses gets an ErrInvalidName that quotes it.
func FuzzValidateName(f *testing.F) {
	for _, s := range []string{"Cedar", "Agent 00042", "host\nA PERSON SAID:", "[x]", "a\u202Eb", "O'Brien", "Zoe\u0308", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		err := identity.ValidateName(name)
		if err != nil {
			require.ErrorIs(t, err, identity.ErrInvalidName)
			return
		}
		require.True(t, utf8.ValidString(name))
		require.LessOrEqual(t, utf8.RuneCountInString(name), identity.MaxNameChars)
		require.Equal(t, strings.TrimSpace(name), name)
		for _, r := range name {
			require.False(t, unicode.IsControl(r) || unicode.Is(unicode.Cf, r), "%U in %q", r, name)
			require.NotContains(t, "[]():\"\n\r\t", string(r), "%q", name)
		}
	})
}
