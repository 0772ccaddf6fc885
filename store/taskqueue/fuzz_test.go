package taskqueue

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/task"
)

// FuzzDecode feeds arbitrary bytes to the queue file decoder: it must never
// panic, must report every refusal as a *identity.CorruptError, and what it accepts
// must survive the queue's operations and re-encode to a file that decodes
// to the same document.
func FuzzDecode(f *testing.F) {
	golden, err := os.ReadFile(filepath.Join("testdata", "tasks.golden.json"))
	require.NoError(f, err)
	for _, seed := range []string{
		string(golden),
		string(golden[:len(golden)/3]),
		"",
		"null",
		"[]",
		`{"version":1,"seq":0,"tasks":null}`,
		`{"version":1,"seq":18446744073709551615,"tasks":[` + pendingJSON("task-000001") + `]}`,
		`{"version":2,"seq":0,"tasks":[]}`,
		`{"version":1,"seq":-1,"tasks":[]}`,
		`{"version":1,"seq":2,"tasks":[` + pendingJSON("a") + `,` + pendingJSON("a") + `]}`,
		`{"version":1,"seq":1,"tasks":[{"id":"t","description":"d","status":"assigned","assigned_to":"cedar","submitted":"9999-12-31T23:00:00Z","assigned":"9999-12-31T23:59:59Z"}]}`,
		`{"version":1,"seq":1,"tasks":[{"id":"t","description":"\u0000\ud800","status":"completed","submitted":"2025-01-01T00:00:00+14:00","ended":"0000-01-01T00:00:00Z"}]}`,
		`{"version":1,"tasks":[{"id":"t","description":"d","status":"pending","submitted":"2025-01-01T00:00:00Z","assigned_to":"x"}]}`,
		"{\"version\":1,\"seq\":0,\"tasks\":[]}\n\x00",
	} {
		f.Add([]byte(seed))
	}
	now := time.Date(2025, 3, 1, 9, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := decode(data, "tasks.json")
		if err != nil {
			var ce *identity.CorruptError
			require.ErrorAs(t, err, &ce, "refusal is not a CorruptError")
			require.Equal(t, "tasks.json", ce.Path, "CorruptError does not name the file: %v", err)
			require.NotEmpty(t, ce.Reason, "CorruptError without a reason: %v", err)
			return
		}
		enc, err := encode(d)
		if err != nil {
			return // e.g. a time the encoder refuses; reported, nothing lost
		}
		d2, err := decode(enc, "tasks.json")
		require.NoError(t, err, "re-encoded document does not decode:\n%s", enc)
		enc2, err := encode(d2)
		require.NoError(t, err, "encoding is not stable:\n%s", enc)
		require.Equal(t, string(enc), string(enc2), "encoding is not stable")
		// The queue's operations work on whatever was accepted.
		d2.expire(now, task.DefaultTimeout)
		d2.trim(2)
		_ = d2.newID()
		d2.shrink(1000)
		_ = d2.liveSize()
	})
}
