package engine

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// chatMLTemplate is the Ollama (Go text/template) form of a ChatML
// template with tools in the Hermes format, the model file's chat
// template for `ollama create`.
const chatMLTemplate = `{{- if or .System .Tools }}<|im_start|>system
{{ if .System }}{{ .System }}{{ end }}
{{- if .Tools }}

# Tools

You may call one or more functions to assist with the user query.

You are provided with function signatures within <tools></tools> XML tags:
<tools>
{{- range .Tools }}
{"type": "function", "function": {{ .Function }}}
{{- end }}
</tools>

For each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:
<tool_call>
{"name": <function-name>, "arguments": <args-json-object>}
</tool_call>
{{- end }}<|im_end|>
{{ end }}
{{- range .Messages }}
{{- if eq .Role "system" }}{{ continue }}{{ end }}
{{- if eq .Role "tool" }}<|im_start|>user
<tool_response>
{{ .Content }}
</tool_response><|im_end|>
{{ else if .ToolCalls }}<|im_start|>assistant
{{ .Content }}
{{- range .ToolCalls }}
<tool_call>
{"name": "{{ .Function.Name }}", "arguments": {{ .Function.Arguments }}}
</tool_call>
{{- end }}<|im_end|>
{{ else }}<|im_start|>{{ .Role }}
{{ .Content }}<|im_end|>
{{ end }}
{{- end }}<|im_start|>assistant
`

// startOllama runs a real `ollama serve` (opt-in, EXISTENCE_ENGINE=ollama)
// on a free port with its models under DIR/ollama, and creates the model
// from the model file with a ChatML template. Ollama has no counterpart
// of [Config].ToolChoice or JSONLimit: its replies to tools are the
// model's choice, and its JSON strings are unbounded.
func startOllama(t testing.TB, cfg Config, f Files) (*Server, error) {
	bin, err := exec.LookPath("ollama")
	if err != nil {
		t.Skip("engine: EXISTENCE_ENGINE=ollama needs `ollama` on PATH (see docs/development.md#real-engines); " + How)
	}
	if _, err := os.Stat(f.Model); err != nil {
		t.Skipf("engine: %v: %s", err, How)
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	host := "127.0.0.1:" + strconv.Itoa(port)
	env := append(os.Environ(),
		"OLLAMA_HOST="+host,
		"OLLAMA_MODELS="+filepath.Join(f.Dir, "ollama", "models"),
		"OLLAMA_NUM_PARALLEL="+strconv.Itoa(cfg.Slots),
		"OLLAMA_MAX_QUEUE="+strconv.Itoa(cfg.Queue),
		"OLLAMA_CONTEXT_LENGTH="+strconv.Itoa(cfg.Window),
		"OLLAMA_NOPRUNE=1",
	)
	s := &Server{URL: "http://" + host, Model: ModelName, Engine: Ollama, Config: cfg}
	s.cmd = exec.Command(bin, "serve")
	s.cmd.Env = env
	s.cmd.Stderr = &lockedWriter{s: s}
	s.cmd.Stdout = &lockedWriter{s: s}
	if err := s.cmd.Start(); err != nil {
		return nil, fmt.Errorf("engine: starting ollama serve: %w", err)
	}
	t.Cleanup(func() { s.stop(t) })
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := waitHTTP(ctx, s.URL+"/api/version"); err != nil {
		return nil, fmt.Errorf("engine: ollama serve did not answer: %w\n%s", err, s.Log())
	}
	dir := t.TempDir()
	modelfile := filepath.Join(dir, "Modelfile")
	body := fmt.Sprintf("FROM %s\nTEMPLATE \"\"\"%s\"\"\"\nPARAMETER stop <|im_end|>\nPARAMETER num_thread %d\n", f.Model, chatMLTemplate, cfg.Threads)
	if err := os.WriteFile(modelfile, []byte(body), 0o600); err != nil {
		return nil, err
	}
	create := exec.CommandContext(ctx, bin, "create", ModelName, "-f", modelfile)
	create.Env = env
	if out, err := create.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("engine: ollama create: %w\n%s", err, out)
	}
	return s, nil
}
