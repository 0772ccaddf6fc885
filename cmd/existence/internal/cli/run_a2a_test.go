package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/a2aserver"
	"github.com/existence-loop/sdk/hostaccess"
	"github.com/existence-loop/sdk/store/taskqueue"
)

// TestA2AAgentFlag: -a2a-agent URL (with -a2a-token) fetches the remote
// agent's card and gives the trio its tool; a card that cannot be
// fetched stops the run with the flag's name.
func TestA2AAgentFlag(t *testing.T) {
	r := testRunner(t, nil)
	s, err := a2aserver.New(a2aserver.Config{Agents: hostaccess.Single(r.Agent("scout")), Tasks: taskqueue.NewMemory(taskqueue.Options{})})
	require.NoError(t, err)
	mux := http.NewServeMux()
	s.Mount(mux, hostaccess.NewAuth(hostaccess.AuthConfig{Token: "remote-token"}))
	srv := httptest.NewServer(mux)
	defer srv.Close()

	o, err := parseRunFlags([]string{"-a2a-agent", srv.URL, "-a2a-token", "remote-token"}, io.Discard)
	require.NoError(t, err)
	var stderr bytes.Buffer
	tools, closeAll, err := connectA2A(context.Background(), o.a2a, &stderr)
	require.NoError(t, err)
	defer closeAll()
	require.Len(t, tools, 1)
	assert.Equal(t, "a2a_cedar", tools[0].Name(), "named after the card")
	assert.Contains(t, stderr.String(), `the remote agent "Cedar" (A2A`)
	var schema map[string]any
	require.NoError(t, json.Unmarshal(tools[0].Schema(), &schema))
	assert.Contains(t, schema["properties"], "message")

	o, err = parseRunFlags([]string{"-a2a-agent", srv.URL, "-a2a-token", "wrong"}, io.Discard)
	require.NoError(t, err)
	_, _, err = connectA2A(context.Background(), o.a2a, &stderr)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "-a2a-agent "+srv.URL)
	assert.Contains(t, err.Error(), "401")
}
