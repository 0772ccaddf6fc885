package engine_test

import (
	"fmt"

	"github.com/existence-loop/sdk/internal/engine"
)

// Strip takes out of a reply what varies from run to run, so that a
// transcript changes only when the engine's behaviour does.
func ExampleStrip() {
	ids := map[string]string{}
	reply := `{"model":"smollm2-random","created_at":"2026-11-28T11:00:41.156Z","message":{"role":"assistant","content":"","tool_calls":[{"id":"call_y4hq8hnd","function":{"index":0,"name":"write_note","arguments":{"text":"hi"}}}]},"done":true,"done_reason":"stop","total_duration":651533522,"prompt_eval_count":506,"prompt_eval_duration":274813174,"eval_count":88,"eval_duration":226084620}`
	fmt.Println(string(engine.Strip([]byte(reply), ids)))
	// The next request sends the call's id back: it gets the same number.
	fmt.Println(string(engine.Strip([]byte(`{"role":"tool","tool_call_id":"call_y4hq8hnd"}`), ids)))
	// Output:
	// {"created_at":"2026-01-01T00:00:00Z","done":true,"done_reason":"stop","eval_count":88,"eval_duration":0,"message":{"content":"","role":"assistant","tool_calls":[{"function":{"arguments":{"text":"hi"},"index":0,"name":"write_note"},"id":"call_0"}]},"model":"smollm2-random","prompt_eval_count":506,"prompt_eval_duration":0,"total_duration":0}
	// {"role":"tool","tool_call_id":"call_0"}
}
