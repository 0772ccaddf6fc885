package requests

import (
	"errors"
	"testing"

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
			if !errors.Is(err, identity.ErrCorrupt) {
				t.Fatalf("error not identity.ErrCorrupt: %v", err)
			}
			return
		}
		b, err := encode(d)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := decode(b, "requests.json"); err != nil {
			t.Fatalf("re-encoded document refused: %v", err)
		}
	})
}
