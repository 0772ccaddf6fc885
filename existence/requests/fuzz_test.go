package requests

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/identity"
)

// FuzzDecode checks that any file content either decodes to a document that
// re-encodes and decodes to itself, or is refused as corrupt.
func FuzzDecode(f *testing.F) {
	f.Add([]byte(`{"version":1,"seq":1,"requests":[{"id":"req-000001","agent":"scout","kind":"question","text":"x","status":"pending","created":"2026-11-23T09:00:00Z"}]}`))
	f.Add([]byte(`{"version":1,"seq":0,"requests":[]}`))
	f.Add([]byte(`{`))
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := decode(data, "requests.json")
		if err != nil {
			require.ErrorIs(t, err, identity.ErrCorrupt, "error not identity.ErrCorrupt")
			return
		}
		b, err := encode(d)
		require.NoError(t, err)
		_, err = decode(b, "requests.json")
		require.NoError(t, err, "re-encoded document refused")
	})
}
