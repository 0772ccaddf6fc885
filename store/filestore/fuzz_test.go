package filestore

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/existence-loop/sdk/identity"
	"github.com/stretchr/testify/require"
)

// FuzzDecodeDocument checks that the document decoder never panics, that
// every error is a [*CorruptError] or wraps [ErrFutureVersion], and that
// every state it accepts is valid, belongs to the file's agent and
// re-encodes to a document that decodes to the same state.
func FuzzDecodeDocument(f *testing.F) {
	f.Add(sampleDocument(f, "scout"))
	v0, err := json.Marshal(sampleState("scout"))
	require.NoError(f, err)
	f.Add(v0)
	for _, d := range badDocuments() {
		f.Add(d.data(f))
	}
	f.Add([]byte(`{"schema_version": 1, "state": {"identity": {"agent_id": "scout"}, "suffering": {"active": null}}}`))
	f.Add([]byte(`{"identity": {"agent_id": "scout", "goals": [{"status": "active"}, {"status": "active"}]}}`))
	f.Add([]byte(`{"schema_version": 1e3, "state": {}}`))
	f.Add([]byte(`{"schema_version": -1}`))
	f.Add([]byte(`{"schema_version": 1, "state": {"identity": {"agent_id": "scout", "created_at": "2026-13-40T25:61:00Z"}}}`))
	f.Add([]byte(`{"Schema_Version": 1, "STATE": {"Identity": {"Agent_ID": "scout"}}}`))
	f.Add([]byte("\xef\xbb\xbf{}"))
	f.Add([]byte(`{"identity": {"agent_id": "sc\u006fut", "name": "\ud800"}}`))

	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := decodeDocument("scout.json", "scout", data)
		if err != nil {
			var ce *identity.CorruptError
			switch {
			case errors.As(err, &ce):
				require.Equal(t, "scout.json", ce.Path, "CorruptError without path: %#v", ce)
				require.NotEmpty(t, ce.Reason, "CorruptError without reason: %#v", ce)
			case errors.Is(err, identity.ErrFutureVersion):
			default:
				require.Fail(t, "unexpected error type", "%T: %v", err, err)
			}
			require.Nil(t, s, "a state and an error")
			return
		}
		require.Equal(t, "scout", s.Identity.AgentID, "accepted agent id")
		require.NoError(t, s.Validate(), "accepted an invalid state")
		enc, err := encodeDocument(s, 0, 0)
		require.NoError(t, err, "accepted state does not encode")
		s2, err := decodeDocument("scout.json", "scout", enc)
		require.NoError(t, err, "re-encoded state does not decode:\n%s", enc)
		enc2, err := encodeDocument(s2, 0, 0)
		require.NoError(t, err)
		require.Equal(t, string(enc), string(enc2), "round trip changed the document")
	})
}
