package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/existence-loop/sdk/llm"
	"github.com/existence-loop/sdk/llm/llmtest"
)

// otlpReceiver is an OTLP/HTTP trace receiver on loopback: it decodes
// each export request's protobuf and keeps the spans.
type otlpReceiver struct {
	mu       sync.Mutex
	spans    []*tracepb.Span
	services []string
	paths    []string
}

func (r *otlpReceiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, err := io.ReadAll(req.Body)
	if err != nil || req.Header.Get("Content-Type") != "application/x-protobuf" {
		http.Error(w, "want a protobuf body", http.StatusBadRequest)
		return
	}
	var ex coltracepb.ExportTraceServiceRequest
	if err := proto.Unmarshal(body, &ex); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	r.mu.Lock()
	r.paths = append(r.paths, req.URL.Path)
	for _, rs := range ex.ResourceSpans {
		for _, a := range rs.GetResource().GetAttributes() {
			if a.Key == "service.name" {
				r.services = append(r.services, a.GetValue().GetStringValue())
			}
		}
		for _, ss := range rs.ScopeSpans {
			r.spans = append(r.spans, ss.Spans...)
		}
	}
	r.mu.Unlock()
	out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(out)
}

func otlpAttrs(s *tracepb.Span) map[string]*commonpb.AnyValue {
	m := map[string]*commonpb.AnyValue{}
	for _, kv := range s.Attributes {
		m[kv.Key] = kv.Value
	}
	return m
}

// toolUser scripts the stand-in: a cycle chooses a goal; its tool loop
// lists the workspace once, then answers.
func toolUser(c *llmtest.Call) llmtest.Answer {
	switch {
	case len(c.Tools) == 0:
		return llmtest.Answer{Text: `{"action":"goal","content":"list the workspace","reasoning":"to know what is here"}`}
	case c.Messages[len(c.Messages)-1].Role == llm.RoleTool:
		return llmtest.Answer{Text: "The workspace is empty."}
	}
	return llmtest.Answer{ToolCalls: []llm.ToolCall{{Name: "list_files", Arguments: json.RawMessage(`{"path":"."}`)}}}
}

// TestRunExportsSpansOverOTLP: with OTEL_EXPORTER_OTLP_ENDPOINT set, one
// trio cycle with a tool call exports its span tree to an OTLP/HTTP
// receiver: per agent, the cycle's invoke_agent span with its chat span,
// and under it the goal's invoke_agent span with the executor's chat spans
// and the execute_tool span, each naming the agent; no prompt text.
func TestRunExportsSpansOverOTLP(t *testing.T) {
	t.Chdir(t.TempDir())
	recv := &otlpReceiver{}
	col := httptest.NewServer(recv)
	t.Cleanup(col.Close)
	s := llmtest.NewServer(llmtest.ServerConfig{Reply: toolUser})
	url := s.Start()
	t.Cleanup(s.Close)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", col.URL)
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "")
	t.Setenv("OTEL_TRACES_EXPORTER", "")
	t.Setenv("OTEL_SDK_DISABLED", "")
	t.Setenv("OTEL_SERVICE_NAME", "trio-test")
	t.Setenv(contentEnv, "")

	var out, errb bytes.Buffer
	code := Main([]string{"run", "-llm-url", url, "-heartbeat", "50ms", "-cycles", "1", "-json"}, strings.NewReader(""), &out, &errb)
	require.Equal(t, ExitOK, code, errb.String())
	assert.Contains(t, errb.String(), "exporting OpenTelemetry spans to "+col.URL+" (http/protobuf)")

	recv.mu.Lock()
	defer recv.mu.Unlock()
	require.NotEmpty(t, recv.paths, "spans were exported at the stop")
	assert.Equal(t, "/v1/traces", recv.paths[0])
	assert.Contains(t, recv.services, "trio-test")
	byID := map[string]*tracepb.Span{}
	for _, sp := range recv.spans {
		byID[string(sp.SpanId)] = sp
	}
	type node struct{ name, phase, parent, parentPhase string }
	trees := map[string][]node{} // agent id → its spans
	for _, sp := range recv.spans {
		a := otlpAttrs(sp)
		id := a["gen_ai.agent.id"].GetStringValue()
		require.NotEmpty(t, id, "%s names its agent", sp.Name)
		require.NotEmpty(t, a["gen_ai.agent.name"].GetStringValue())
		for _, k := range []string{"gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.tool.call.arguments", "existence.goal"} {
			assert.NotContains(t, a, k, "no content unless asked for")
		}
		n := node{name: strings.Fields(sp.Name)[0], phase: a["existence.phase"].GetStringValue()}
		if p := byID[string(sp.ParentSpanId)]; p != nil {
			n.parent, n.parentPhase = strings.Fields(p.Name)[0], otlpAttrs(p)["existence.phase"].GetStringValue()
		}
		trees[id] = append(trees[id], n)
		if n.name == "chat" {
			assert.Positive(t, a["gen_ai.usage.input_tokens"].GetIntValue())
			assert.Positive(t, a["gen_ai.usage.output_tokens"].GetIntValue())
			assert.Equal(t, "qwen3.5:9b", a["gen_ai.request.model"].GetStringValue())
			assert.Equal(t, "ollama", a["gen_ai.provider.name"].GetStringValue())
			assert.NotEmpty(t, a["gen_ai.response.finish_reasons"].GetArrayValue().GetValues())
		}
	}
	require.Len(t, trees, 3, "the three agents")
	for id, tree := range trees {
		assert.ElementsMatch(t, []node{
			{"invoke_agent", "cycle", "", ""},
			{"chat", "", "invoke_agent", "cycle"},
			{"invoke_agent", "goal", "invoke_agent", "cycle"},
			{"chat", "", "invoke_agent", "goal"},
			{"execute_tool", "", "invoke_agent", "goal"},
			{"chat", "", "invoke_agent", "goal"},
		}, tree, id)
	}
}

func TestOTLPTracingSettings(t *testing.T) {
	env := func(kv map[string]string) func(string) string { return func(k string) string { return kv[k] } }
	ctx := context.Background()
	tr, err := otlpTracing(ctx, env(nil))
	require.NoError(t, err)
	assert.Nil(t, tr.provider, "off without an endpoint")
	tr, err = otlpTracing(ctx, env(map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1", "OTEL_SDK_DISABLED": "true"}))
	require.NoError(t, err)
	assert.Nil(t, tr.provider)
	tr, err = otlpTracing(ctx, env(map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:1/v1/traces", "OTEL_TRACES_EXPORTER": "none"}))
	require.NoError(t, err)
	assert.Nil(t, tr.provider)
	_, err = otlpTracing(ctx, env(map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"}))
	assert.ErrorContains(t, err, "want http/protobuf or grpc")
	tr, err = otlpTracing(ctx, env(map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc", contentEnv: "true"}))
	require.NoError(t, err)
	assert.NotNil(t, tr.provider)
	assert.True(t, tr.content)
	assert.Equal(t, "http://127.0.0.1:1 (grpc)", tr.endpoint)
	require.NoError(t, tr.shutdown(ctx))
}
