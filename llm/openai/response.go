package openai

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/respjson"

	"github.com/existence-loop/sdk/llm"
)

// wholeCount reports whether a usage object counts the whole prompt,
// cached tokens included: it says how many were cached
// (prompt_tokens_details.cached_tokens), as llama.cpp's server, vLLM and
// OpenAI do, and Ollama's /v1 does not.
func wholeCount(u oai.CompletionUsage) bool {
	return u.JSON.PromptTokensDetails.Valid() && u.PromptTokensDetails.JSON.CachedTokens.Valid()
}

// fromCompletion maps a non-streamed reply. Only the first choice is used
// (the adapter never asks for n > 1).
func fromCompletion(cc *oai.ChatCompletion) (*llm.Response, error) {
	resp := &llm.Response{Model: cc.Model}
	if cc.JSON.Usage.Valid() {
		resp.PromptTokens = int(cc.Usage.PromptTokens)
		resp.OutputTokens = int(cc.Usage.CompletionTokens)
	}
	if len(cc.Choices) == 0 {
		// No choice at all: reported as an empty reply by Generate.
		return resp, nil
	}
	ch := cc.Choices[0]
	msg := ch.Message
	resp.Text = msg.Content
	if resp.Text == "" && msg.Refusal != "" {
		resp.Text = msg.Refusal
	}
	resp.Thinking = reasoning(msg.JSON.ExtraFields)
	for i, tc := range msg.ToolCalls {
		if tc.Type != "" && tc.Type != "function" {
			return nil, fmt.Errorf("openai: protocol error: unsupported tool call type %q", tc.Type)
		}
		resp.ToolCalls = append(resp.ToolCalls, toolCall(i, tc.ID, tc.Function.Name, tc.Function.Arguments))
	}
	resp.DoneReason = doneReason(ch.FinishReason)
	return resp, nil
}

// toolCall builds an llm.ToolCall, giving it "call_N" when the server sent
// no ID and "{}" when it sent no arguments.
func toolCall(i int, id, name, args string) llm.ToolCall {
	if id == "" {
		id = fmt.Sprintf("call_%d", i)
	}
	if strings.TrimSpace(args) == "" {
		args = "{}"
	}
	return llm.ToolCall{ID: id, Name: name, Arguments: json.RawMessage(args)}
}

// doneReason normalises a finish_reason.
func doneReason(r string) string {
	switch r {
	case "function_call":
		return llm.DoneToolCalls
	default:
		return r // "stop", "length", "tool_calls", "content_filter", ...
	}
}

// reasoning returns the reasoning text of a message or delta: the
// non-standard "reasoning_content" field (llama.cpp, vLLM, DeepSeek) or
// "reasoning" (vLLM ≥ 0.10, OpenRouter).
func reasoning(extra map[string]respjson.Field) string {
	for _, key := range []string{"reasoning_content", "reasoning"} {
		f, ok := extra[key]
		if !ok {
			continue
		}
		var s string
		if json.Unmarshal([]byte(f.Raw()), &s) == nil && s != "" {
			return s
		}
	}
	return ""
}

// accumulator aggregates streamed chunks. The client's
// ChatCompletionAccumulator is not used because it sums usage over chunks
// (wrong for servers that repeat cumulative usage, e.g. vLLM with
// continuous_usage_stats), rejects chunks whose ids differ, and drops
// non-standard delta fields such as reasoning_content. (Re-checked against
// openai-go v3.96.0: all three still hold.)
type accumulator struct {
	model    string
	text     strings.Builder
	refusal  strings.Builder
	thinking strings.Builder
	calls    []*streamCall
	finish   string
	finished bool
	prompt   int
	output   int
	whole    bool // the usage counts the whole prompt (wholeCount)
}

type streamCall struct {
	id, name string
	args     strings.Builder
}

func (a *accumulator) add(c oai.ChatCompletionChunk) error {
	if c.Model != "" {
		a.model = c.Model
	}
	if c.JSON.Usage.Valid() {
		a.prompt = int(c.Usage.PromptTokens)
		a.output = int(c.Usage.CompletionTokens)
		a.whole = wholeCount(c.Usage)
	}
	for _, ch := range c.Choices {
		if ch.Index != 0 {
			continue // only the first choice is used
		}
		d := ch.Delta
		a.text.WriteString(d.Content)
		a.refusal.WriteString(d.Refusal)
		a.thinking.WriteString(reasoning(d.JSON.ExtraFields))
		for _, tc := range d.ToolCalls {
			idx := int(tc.Index)
			if idx < 0 {
				idx = 0 // some servers send -1 for a single call
			}
			if idx > 1024 {
				return fmt.Errorf("openai: protocol error: tool call index %d", tc.Index)
			}
			for len(a.calls) <= idx {
				a.calls = append(a.calls, &streamCall{})
			}
			call := a.calls[idx]
			if tc.ID != "" {
				call.id = tc.ID
			}
			call.name += tc.Function.Name
			call.args.WriteString(tc.Function.Arguments)
		}
		if ch.FinishReason != "" {
			a.finish = ch.FinishReason
			a.finished = true
		}
	}
	return nil
}

// response returns the aggregated reply, or an error when the stream ended
// before any finish_reason (the server went away mid-reply).
func (a *accumulator) response() (*llm.Response, error) {
	if !a.finished {
		return nil, fmt.Errorf("stream ended before a finish_reason: %w", io.ErrUnexpectedEOF)
	}
	resp := &llm.Response{
		Model:        a.model,
		Text:         a.text.String(),
		Thinking:     a.thinking.String(),
		DoneReason:   doneReason(a.finish),
		PromptTokens: a.prompt,
		OutputTokens: a.output,
	}
	if resp.Text == "" {
		resp.Text = a.refusal.String()
	}
	for i, c := range a.calls {
		resp.ToolCalls = append(resp.ToolCalls, toolCall(i, c.id, c.name, c.args.String()))
	}
	return resp, nil
}
