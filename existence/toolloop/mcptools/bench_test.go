package mcptools_test

import (
	"encoding/json"
	"testing"

	"github.com/existence-loop/sdk/existence/toolloop/mcptools"
)

// BenchmarkCall measures one tool call through a Set: the round trip to an
// in-process server (the SDK's in-memory transport) and to a stdio
// subprocess.
func BenchmarkCall(b *testing.B) {
	args := json.RawMessage(`{"text":"hello"}`)
	run := func(b *testing.B, s mcptools.ServerConfig) {
		set, err := mcptools.Connect(b.Context(), mcptools.Config{Servers: []mcptools.ServerConfig{s}, Logger: quiet})
		if err != nil {
			b.Fatal(err)
		}
		defer set.Close()
		echo := set.Tools()[0]
		b.ResetTimer()
		for b.Loop() {
			if _, err := echo.Call(b.Context(), args); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("in-memory", func(b *testing.B) {
		run(b, mcptools.ServerConfig{Name: "m", Transport: inMemory(b, newServer, nil), Allow: []string{"echo"}})
	})
	b.Run("stdio", func(b *testing.B) {
		bin, err := serverBinary()
		if err != nil {
			b.Skip("cannot build the test server:", err)
		}
		run(b, mcptools.ServerConfig{Name: "s", Command: bin, Allow: []string{"echo"}})
	})
}
