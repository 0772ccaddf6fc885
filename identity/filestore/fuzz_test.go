package filestore

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"

	"github.com/existence-loop/sdk/identity"
)

// FuzzDecodeDocument checks that the document decoder never panics, that
// every error is a [*CorruptError] or wraps [ErrFutureVersion], and that
// every state it accepts is valid, belongs to the file's agent and
// re-encodes to a document that decodes to the same state.
func FuzzDecodeDocument(f *testing.F) {
	f.Add(sampleDocument(f, "scout"))
	v0, err := json.Marshal(sampleState("scout"))
	if err != nil {
		f.Fatal(err)
	}
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
				if ce.Path != "scout.json" || ce.Reason == "" {
					t.Fatalf("CorruptError without path or reason: %#v", ce)
				}
			case errors.Is(err, identity.ErrFutureVersion):
			default:
				t.Fatalf("unexpected error type %T: %v", err, err)
			}
			if s != nil {
				t.Fatal("a state and an error")
			}
			return
		}
		if s.Identity.AgentID != "scout" {
			t.Fatalf("accepted agent id %q", s.Identity.AgentID)
		}
		if err := s.Validate(); err != nil {
			t.Fatalf("accepted an invalid state: %v", err)
		}
		enc, err := encodeDocument(s, 0, 0)
		if err != nil {
			t.Fatalf("accepted state does not encode: %v", err)
		}
		s2, err := decodeDocument("scout.json", "scout", enc)
		if err != nil {
			t.Fatalf("re-encoded state does not decode: %v\n%s", err, enc)
		}
		enc2, err := encodeDocument(s2, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(enc, enc2) {
			t.Fatalf("round trip changed the document:\n%s\n---\n%s", enc, enc2)
		}
	})
}
