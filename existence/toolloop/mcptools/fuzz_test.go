package mcptools

import (
	"encoding/json"
	"errors"
	"testing"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
)

// FuzzRender feeds arbitrary tool results (as a server could send them) to
// render: it never panics, and it either fails with a typed error or
// returns valid UTF-8.
func FuzzRender(f *testing.F) {
	for _, s := range []string{
		`{"content":[{"type":"text","text":"hi"}]}`,
		`{"content":[{"type":"image","mimeType":"image/png","data":"UE5H"}]}`,
		`{"content":[{"type":"resource","resource":{"uri":"file:///a","text":"x"}}]}`,
		`{"content":[{"type":"resource","resource":{"uri":"file:///a","blob":"UE5H"}}]}`,
		`{"content":[{"type":"resource_link","uri":"file:///a","name":"a"}]}`,
		`{"content":[],"structuredContent":{"a":1}}`,
		`{"content":[{"type":"text","text":"\xff"}],"isError":true}`,
	} {
		f.Add([]byte(s), false)
	}
	f.Fuzz(func(t *testing.T, data []byte, nonText bool) {
		var res mcp.CallToolResult
		if err := json.Unmarshal(data, &res); err != nil {
			return
		}
		out, err := render(&res, nonText)
		if err != nil {
			require.True(t, errors.Is(err, ErrMalformed) || errors.Is(err, ErrToolError), "untyped error %v", err)
			return
		}
		require.True(t, utf8.ValidString(out), "invalid UTF-8: %q", out)
	})
}
