package pgstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/internal/pgtest"
	"github.com/existence-loop/sdk/store/storetest"
)

// TestDocumentWithoutLastPresence: a document written before State had
// LastPresence (no "last_presence" key) loads as never present, everything else intact, and
// the next save stores the field.
func TestDocumentWithoutLastPresence(t *testing.T) {
	ctx := context.Background()
	s := open(t, pgtest.New(t), "a", 0)
	want := storetest.FullState("scout")
	require.NoError(t, s.Save(ctx, want))
	tag, err := s.Pool().Exec(ctx, `
		WITH old AS (SELECT convert_to(((convert_from(doc, 'UTF8')::jsonb) #- '{last_presence}')::text, 'UTF8') AS doc
			FROM existence_states WHERE agent_id = 'scout')
		UPDATE existence_states SET doc = old.doc, doc_sha256 = sha256(old.doc) FROM old WHERE agent_id = 'scout'`)
	require.NoError(t, err, "removing last_presence")
	require.Equal(t, int64(1), tag.RowsAffected(), "removing last_presence: rows")
	got, err := s.Load(ctx, "scout")
	require.NoError(t, err)
	require.True(t, got.LastPresence.IsZero(), "LastPresence = %v, want zero for a document without it", got.LastPresence)
	want.LastPresence = time.Time{}
	require.Equal(t, storetest.StateJSON(t, want), storetest.StateJSON(t, got), "the old document lost fields")
	got.LastPresence = t0
	require.NoError(t, s.Save(ctx, got))
	again, err := s.Load(ctx, "scout")
	require.NoError(t, err)
	require.True(t, again.LastPresence.Equal(t0), "LastPresence after a save = %v, want %v", again.LastPresence, t0)
}
