package mcptools_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/existence/toolloop/mcptools"
	"github.com/existence-loop/sdk/existence/toolloop/mcptools/internal/testserver"
)

// TestResourceSubscriptionOverStdio: over a real stdio subprocess, a
// resource is read, an update notification reaches its subscription, the
// new text is read back, and the subscription ends when the server
// crashes; a new one is made once the server is back.
func TestResourceSubscriptionOverStdio(t *testing.T) {
	bin := stdioServer(t)
	ctx := t.Context()
	set := connect(t, mcptools.Config{Servers: []mcptools.ServerConfig{{Name: "sub", Command: bin}}, MinBackoff: time.Millisecond, MaxBackoff: time.Millisecond})
	text, err := set.ReadResource(ctx, "sub", testserver.NoteURI)
	require.NoError(t, err)
	assert.Equal(t, "first note", text)

	sub, err := set.Subscribe(ctx, "sub", testserver.NoteURI)
	require.NoError(t, err)
	assert.Equal(t, testserver.NoteURI, sub.URI())
	// The server registers the subscription a moment after Subscribe
	// returns (subscriptions/listen): change the note until it says so.
	require.Eventually(t, func() bool {
		_, err := toolByName(t, set, "sub__set_note").Call(ctx, json.RawMessage(`{"text":"second note"}`))
		require.NoError(t, err)
		select {
		case <-sub.Updates():
			return true
		case <-time.After(50 * time.Millisecond):
			return false
		}
	}, 10*time.Second, time.Millisecond, "no update notification")
	text, err = set.ReadResource(ctx, "sub", testserver.NoteURI)
	require.NoError(t, err)
	assert.Equal(t, "second note", text)

	_, err = toolByName(t, set, "sub__crash").Call(ctx, nil)
	require.Error(t, err)
	select {
	case <-sub.Done():
	case <-time.After(10 * time.Second):
		require.FailNow(t, "the subscription outlived its session")
	}
	require.NoError(t, sub.Close(ctx), "closing an ended subscription is harmless")
	require.Eventually(t, func() bool {
		sub, err = set.Subscribe(ctx, "sub", testserver.NoteURI)
		return err == nil
	}, 10*time.Second, 5*time.Millisecond, "subscribing again once the server restarts")
	text, err = set.ReadResource(ctx, "sub", testserver.NoteURI)
	require.NoError(t, err)
	assert.Equal(t, "first note", text, "a new process")
	require.NoError(t, sub.Close(ctx))
	select {
	case <-sub.Done():
	default:
		assert.Fail(t, "Close ends the subscription")
	}

	_, err = set.ReadResource(ctx, "nope", testserver.NoteURI)
	require.ErrorIs(t, err, mcptools.ErrConfig)
	_, err = set.Subscribe(ctx, "nope", testserver.NoteURI)
	require.ErrorIs(t, err, mcptools.ErrConfig)
	_, err = set.ReadResource(ctx, "sub", "test://missing")
	require.Error(t, err)
	assert.Contains(t, err.Error(), `MCP server "sub": reading resource test://missing`)
}
