package llm

import (
	"context"
	"encoding/json"
	"time"
)

// Model is one language-model backend. It is the only seam between the
// existence loop and a provider: adapters (llm/ollama, llm/openai), the
// scripted fake (llm/llmtest), the middleware of llm/middleware
// (WithRetry, WithTimeout, Fallback, WithRepair, Instrument) and the pools
// of llm/pool all implement it.
//
// Generate sends one request and waits for the whole reply (a streamed reply
// is aggregated by the adapter). It must return promptly when ctx ends, with
// an error that wraps ctx.Err(). Errors are classified: see [StatusError],
// [UnavailableError], [ModelNotFoundError], [TruncatedError] and [ErrEmpty].
// A Model must be safe for concurrent use.
type Model interface {
	Generate(ctx context.Context, req *Request) (*Response, error)
}

// Role is the author of a [Message].
type Role string

// The roles of a conversation.
const (
	RoleSystem    Role = "system"
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool" // the result of a tool call; see Message.ToolCallID
)

// Message is one turn of a conversation.
type Message struct {
	// Role is who wrote the turn: [RoleSystem], [RoleUser],
	// [RoleAssistant] or [RoleTool].
	Role Role `json:"role"`
	// Content is the turn's text: the prompt, the reply, or a tool's
	// result on a RoleTool message. It may be empty on an assistant turn
	// that only asks for tool calls.
	Content string `json:"content"`
	// ToolCalls are the calls an assistant turn asked for (tool calling).
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	// ToolCallID links a RoleTool message to the ToolCall.ID it answers.
	ToolCallID string `json:"tool_call_id,omitempty"`
	// Name is the tool's name on a RoleTool message.
	Name string `json:"name,omitempty"`
}

// ToolCall is one tool invocation requested by the model.
type ToolCall struct {
	// ID identifies the call within a conversation. Providers that do not
	// assign ids (Ollama) get a synthetic one ("call_0", "call_1", ...).
	ID string `json:"id"`
	// Name is the tool's name, as given in ToolDef.Name.
	Name string `json:"name"`
	// Arguments is the JSON object of arguments, exactly as the model sent it.
	Arguments json.RawMessage `json:"arguments"`
}

// ToolDef describes a tool the model may call.
type ToolDef struct {
	// Name is the name the model calls the tool by. OpenAI and Ollama
	// accept 1–64 ASCII letters, digits, "_" and "-".
	Name string `json:"name"`
	// Description tells the model what the tool does and when to use it.
	Description string `json:"description"`
	// Parameters is the JSON Schema (draft 2020-12) of the argument object.
	Parameters json.RawMessage `json:"parameters"`
}

// Request is one call to a [Model].
//
// Zero values mean "provider default": a nil Temperature or Seed is not
// sent. MaxTokens 0 means the adapter's default reply limit: every request
// bounds its reply (ctxwindow.Reserve).
type Request struct {
	// Model overrides the adapter's configured model name when non-empty.
	Model string `json:"model,omitempty"`
	// Messages is the conversation, oldest first.
	Messages []Message `json:"messages"`
	// Format is the JSON Schema of the expected reply (structured output).
	// It is passed to the provider unchanged. Nil asks for free text.
	Format json.RawMessage `json:"format,omitempty"`
	// Tools the model may call. Nil means no tool calling.
	Tools []ToolDef `json:"tools,omitempty"`
	// Temperature is the sampling temperature (typically 0–2).
	Temperature *float64 `json:"temperature,omitempty"`
	// Seed makes sampling reproducible where the provider supports it.
	Seed *int `json:"seed,omitempty"`
	// MaxTokens caps the output length in tokens (Ollama num_predict,
	// OpenAI max_tokens, or max_completion_tokens when configured), at
	// most a quarter of a known context window, which keeps room for it.
	// 0 means the adapter's default: 1024 tokens or a quarter of the
	// window, whichever is smaller (ctxwindow.Reserve). An unbounded reply can
	// hold a model server's slot for minutes.
	MaxTokens int `json:"max_tokens,omitempty"`
}

// Response is a model's complete reply.
type Response struct {
	// Model is the name of the model that answered.
	Model string `json:"model"`
	// Text is the reply text with any separate reasoning ("thinking") removed.
	Text string `json:"text"`
	// Thinking is reasoning the provider returned separately, if any.
	Thinking string `json:"thinking,omitempty"`
	// ToolCalls requested by the model, in order.
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	// DoneReason is why generation stopped, normalised to "stop", "length"
	// or "tool_calls"; other provider values are passed through.
	DoneReason string `json:"done_reason,omitempty"`
	// PromptTokens and OutputTokens are the provider's token counts: the
	// prompt's tokens and the generated tokens (0 when the provider does
	// not report them).
	PromptTokens int `json:"prompt_tokens"`
	OutputTokens int `json:"output_tokens"`
	// Duration is the wall-clock time of the call.
	Duration time.Duration `json:"duration"`
	// Server names the model server of a pool.Pool that answered (its
	// pool.Server.Name, a URL as the CLI names them); empty when no
	// pool made the call. middleware.Trace, above the pool, reads it.
	Server string `json:"server,omitempty"`
	// Parsed is what the parse function of middleware.WithRepairParse made of Text
	// (nil otherwise), so that the caller parses a validated reply once.
	Parsed any `json:"-"`
}

// Done reasons, as normalised in [Response.DoneReason].
const (
	DoneStop      = "stop"
	DoneLength    = "length"
	DoneToolCalls = "tool_calls"
)

// Ptr returns a pointer to v, for the optional fields of [Request]
// (Temperature, Seed).
func Ptr[T any](v T) *T { return &v }
