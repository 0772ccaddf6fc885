package cli

import (
	"context"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/existence/requests"
	"github.com/existence-loop/sdk/existence/toolloop/mcptools"
)

// TestElicitHuman: an MCP server's question is filed in the human-requests
// queue under the asking agent and answered with what the person says.
func TestElicitHuman(t *testing.T) {
	oneField := map[string]any{"type": "object", "properties": map[string]any{"age": map[string]any{"type": "integer"}}}
	twoFields := map[string]any{"type": "object", "properties": map[string]any{
		"name": map[string]any{"type": "string"}, "age": map[string]any{"type": "integer"}}}
	tests := []struct {
		name   string
		schema any
		status requests.Status
		answer string
		want   *mcp.ElicitResult
		text   string
	}{
		{"one field", oneField, requests.Answered, " 42 ", &mcp.ElicitResult{Action: "accept", Content: map[string]any{"age": 42.0}}, "(answer with the age;"},
		{"a JSON object", twoFields, requests.Answered, `{"name": "Ada", "age": 36}`, &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada", "age": 36.0}}, "JSON object of age, name"},
		{"not a number", oneField, requests.Answered, "old", &mcp.ElicitResult{Action: "decline"}, ""},
		{"approved: the defaults", twoFields, requests.Approved, "", &mcp.ElicitResult{Action: "accept", Content: map[string]any{}}, ""},
		{"rejected", oneField, requests.Rejected, "no", &mcp.ElicitResult{Action: "decline"}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			q := requests.NewMemory(requests.Options{})
			elicit := elicitHuman(q, "scout", time.Millisecond)
			done := make(chan struct{})
			var got *mcp.ElicitResult
			var err error
			go func() {
				defer close(done)
				got, err = elicit(t.Context(), mcptools.Elicitation{Server: "wiki", Agent: "builder", Message: "How old?", Mode: "form", Schema: tc.schema})
			}()
			var r requests.Request
			require.Eventually(t, func() bool {
				list, _ := q.List(t.Context(), requests.Filter{})
				if len(list) == 1 {
					r = list[0]
				}
				return len(list) == 1
			}, 10*time.Second, time.Millisecond)
			assert.Equal(t, "builder", r.Agent, "filed under the asking agent")
			assert.Contains(t, r.Text, `The MCP server "wiki" asks: How old?`)
			assert.Contains(t, r.Text, tc.text)
			_, aerr := q.Answer(t.Context(), r.ID, tc.status, tc.answer)
			require.NoError(t, aerr)
			<-done
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}

	// No answer before the call's timeout: cancelled, and the request
	// is closed so that nobody answers it late.
	q := requests.NewMemory(requests.Options{})
	ctx, cancel := context.WithCancel(t.Context())
	var got *mcp.ElicitResult
	var err error
	done := make(chan struct{})
	go func() {
		defer close(done)
		got, err = elicitHuman(q, "scout", time.Millisecond)(ctx, mcptools.Elicitation{Server: "wiki", Message: "?", Mode: "form"})
	}()
	require.Eventually(t, func() bool { list, _ := q.List(t.Context(), requests.Filter{}); return len(list) == 1 }, 10*time.Second, time.Millisecond)
	cancel() // the call's timeout
	<-done
	require.NoError(t, err)
	assert.Equal(t, "cancel", got.Action)
	list, err := q.List(t.Context(), requests.Filter{Status: requests.Rejected})
	require.NoError(t, err)
	require.Len(t, list, 1)
	assert.Equal(t, "scout", list[0].Agent, "no asking agent known: the first of the trio")
}
