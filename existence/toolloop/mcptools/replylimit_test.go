package mcptools_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/existence/toolloop/mcptools"
	"github.com/existence-loop/sdk/llm/llmtest"
)

// TestHTTPReplyCapped: an MCP server over HTTP that answers with an
// endless reply is cut off at the reply cap (8 × max_result_bytes, at
// least 4 MiB, + 1 MiB): the connection fails without the client reading
// the reply whole.
func TestHTTPReplyCapped(t *testing.T) {
	f := llmtest.NewFlood(`{"jsonrpc":"2.0","id":1,"result":{"x":[`, 300<<20)
	t.Cleanup(f.Close)
	var err error
	n := llmtest.Allocated(func() {
		_, err = mcptools.Connect(t.Context(), mcptools.Config{Servers: []mcptools.ServerConfig{{Name: "flood", URL: f.URL}}})
	})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "passed 5242880 bytes", "the reply cap, named")
	assert.Less(t, n, uint64(64<<20), "allocated %d bytes for a 300 MB reply", n)
	assert.Less(t, f.Sent(), int64(100<<20), "the server was cut off")
}
