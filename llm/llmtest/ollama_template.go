package llmtest

// OllamaTemplate is the Ollama (Go text/template) chat template the
// Ollama stand-in renders chat requests with (through Ollama's own
// template package), and the real engine's model is created with
// (internal/engine): Qwen2.5's ChatML template from Ollama's
// library (every system message collated into .System at the top, the
// tool offer in the system block, tool results as user turns in
// <tool_response>), except that an assistant's tool calls are written as
// bare JSON objects, one a line, without the <tool_call> tags. Ollama
// derives the tool-call tag from the template; with none it parses any
// reply that is a JSON object naming a tool as a tool call, which is what
// a reply constrained to a tool call's schema is (see internal/engine.Config.ToolChoice).
const OllamaTemplate = `{{- if .Messages }}
{{- if or .System .Tools }}<|im_start|>system
{{- if .System }}
{{ .System }}
{{- end }}
{{- if .Tools }}

# Tools

You may call one or more functions to assist with the user query.

You are provided with function signatures within <tools></tools> XML tags:
<tools>
{{- range .Tools }}
{"type": "function", "function": {{ .Function }}}
{{- end }}
</tools>

For each function call, return a json object with function name and arguments, one a line:
{"name": <function-name>, "arguments": <args-json-object>}
{{- end }}<|im_end|>
{{ end }}
{{- range $i, $_ := .Messages }}
{{- $last := eq (len (slice $.Messages $i)) 1 -}}
{{- if eq .Role "user" }}<|im_start|>user
{{ .Content }}<|im_end|>
{{ else if eq .Role "assistant" }}<|im_start|>assistant
{{ if .Content }}{{ .Content }}
{{- else if .ToolCalls }}{{ range .ToolCalls }}{"name": "{{ .Function.Name }}", "arguments": {{ .Function.Arguments }}}
{{ end }}
{{- end }}{{ if not $last }}<|im_end|>
{{ end }}
{{- else if eq .Role "tool" }}<|im_start|>user
<tool_response>
{{ .Content }}
</tool_response><|im_end|>
{{ end }}
{{- if and (ne .Role "assistant") $last }}<|im_start|>assistant
{{ end }}
{{- end }}
{{- else }}
{{- if .System }}<|im_start|>system
{{ .System }}<|im_end|>
{{ end }}{{ if .Prompt }}<|im_start|>user
{{ .Prompt }}<|im_end|>
{{ end }}<|im_start|>assistant
{{ end }}{{ .Response }}{{ if .Response }}<|im_end|>{{ end }}`
