package pgstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/existence-loop/sdk/identity/storetest"
	"github.com/existence-loop/sdk/internal/pgtest"
)

// TestDocumentWithoutLastPresence: a document written before State had
// LastPresence (no "last_presence" key) loads as never present, everything else intact, and
// the next save stores the field.
func TestDocumentWithoutLastPresence(t *testing.T) {
	ctx := context.Background()
	s := open(t, pgtest.New(t), "a", 0)
	want := storetest.FullState("scout")
	if err := s.Save(ctx, want); err != nil {
		t.Fatal(err)
	}
	tag, err := s.Pool().Exec(ctx, `
		WITH old AS (SELECT convert_to(((convert_from(doc, 'UTF8')::jsonb) #- '{last_presence}')::text, 'UTF8') AS doc
			FROM existence_states WHERE agent_id = 'scout')
		UPDATE existence_states SET doc = old.doc, doc_sha256 = sha256(old.doc) FROM old WHERE agent_id = 'scout'`)
	if err != nil || tag.RowsAffected() != 1 {
		t.Fatalf("removing last_presence: %v (%d rows)", err, tag.RowsAffected())
	}
	got, err := s.Load(ctx, "scout")
	if err != nil {
		t.Fatal(err)
	}
	if !got.LastPresence.IsZero() {
		t.Fatalf("LastPresence = %v, want zero for a document without it", got.LastPresence)
	}
	want.LastPresence = time.Time{}
	if w, g := storetest.StateJSON(t, want), storetest.StateJSON(t, got); w != g {
		t.Fatalf("the old document lost fields:\nwant %s\n got %s", w, g)
	}
	got.LastPresence = t0
	if err := s.Save(ctx, got); err != nil {
		t.Fatal(err)
	}
	again, err := s.Load(ctx, "scout")
	if err != nil {
		t.Fatal(err)
	}
	if !again.LastPresence.Equal(t0) {
		t.Fatalf("LastPresence after a save = %v, want %v", again.LastPresence, t0)
	}
}
