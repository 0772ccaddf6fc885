package openai

import (
	"bytes"
	"encoding/json"
	"fmt"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/shared"

	"github.com/existence-loop/sdk/llm"
)

// params maps an llm.Request to the chat completions request body.
func (m *Model) params(req *llm.Request) (oai.ChatCompletionNewParams, error) {
	model := req.Model
	if model == "" {
		model = m.cfg.Model
	}
	p := oai.ChatCompletionNewParams{Model: model}

	for i, msg := range req.Messages {
		u, err := message(msg)
		if err != nil {
			return p, fmt.Errorf("openai: Request.Messages[%d]: %w", i, err)
		}
		p.Messages = append(p.Messages, u)
	}

	if req.Temperature != nil {
		p.Temperature = param.NewOpt(*req.Temperature)
	}
	if req.Seed != nil {
		p.Seed = param.NewOpt(int64(*req.Seed))
	}
	if req.MaxTokens > 0 {
		m.maxTokens(&p, req.MaxTokens)
	}

	if len(req.Format) > 0 {
		if !json.Valid(req.Format) {
			return p, fmt.Errorf("openai: Request.Format is not valid JSON")
		}
		if m.cfg.JSONObject || bytes.Equal(bytes.TrimSpace(req.Format), []byte(`"json"`)) {
			jo := shared.NewResponseFormatJSONObjectParam()
			p.ResponseFormat.OfJSONObject = &jo
		} else {
			js := shared.ResponseFormatJSONSchemaJSONSchemaParam{
				Name: m.cfg.SchemaName,
				// A json.RawMessage is written to the wire byte for byte:
				// the schema goes out unchanged.
				Schema: json.RawMessage(bytes.Clone(req.Format)),
			}
			if m.cfg.Strict {
				js.Strict = param.NewOpt(true)
			}
			p.ResponseFormat.OfJSONSchema = &shared.ResponseFormatJSONSchemaParam{JSONSchema: js}
		}
	}

	for i, td := range req.Tools {
		fd := shared.FunctionDefinitionParam{Name: td.Name}
		if td.Description != "" {
			fd.Description = param.NewOpt(td.Description)
		}
		if len(td.Parameters) > 0 {
			// FunctionParameters is a map: keep each property's JSON as it is.
			var props map[string]json.RawMessage
			if err := json.Unmarshal(td.Parameters, &props); err != nil || props == nil {
				return p, fmt.Errorf("openai: Request.Tools[%d] (%q): Parameters is not a JSON object", i, td.Name)
			}
			fd.Parameters = make(shared.FunctionParameters, len(props))
			for k, v := range props {
				fd.Parameters[k] = v
			}
		}
		p.Tools = append(p.Tools, oai.ChatCompletionFunctionTool(fd))
	}

	if m.cfg.Stream {
		p.StreamOptions.IncludeUsage = param.NewOpt(true)
	}
	return p, nil
}

// message maps one llm.Message to its wire form.
func message(msg llm.Message) (oai.ChatCompletionMessageParamUnion, error) {
	switch msg.Role {
	case llm.RoleSystem:
		return oai.SystemMessage(msg.Content), nil
	case "developer":
		return oai.DeveloperMessage(msg.Content), nil
	case llm.RoleUser:
		return oai.UserMessage(msg.Content), nil
	case llm.RoleTool:
		if msg.ToolCallID == "" {
			return oai.ChatCompletionMessageParamUnion{}, fmt.Errorf("tool message without ToolCallID")
		}
		return oai.ToolMessage(msg.Content, msg.ToolCallID), nil
	case llm.RoleAssistant:
		var a oai.ChatCompletionAssistantMessageParam
		if msg.Content != "" || len(msg.ToolCalls) == 0 {
			a.Content.OfString = param.NewOpt(msg.Content)
		}
		for j, tc := range msg.ToolCalls {
			args := tc.Arguments
			if len(bytes.TrimSpace(args)) == 0 {
				args = json.RawMessage(`{}`)
			}
			if tc.ID == "" {
				return oai.ChatCompletionMessageParamUnion{}, fmt.Errorf("ToolCalls[%d] (%q) has no ID", j, tc.Name)
			}
			a.ToolCalls = append(a.ToolCalls, oai.ChatCompletionMessageToolCallUnionParam{
				OfFunction: &oai.ChatCompletionMessageFunctionToolCallParam{
					ID: tc.ID,
					Function: oai.ChatCompletionMessageFunctionToolCallFunctionParam{
						Name:      tc.Name,
						Arguments: string(args),
					},
				},
			})
		}
		return oai.ChatCompletionMessageParamUnion{OfAssistant: &a}, nil
	default:
		return oai.ChatCompletionMessageParamUnion{}, fmt.Errorf("unsupported role %q", msg.Role)
	}
}

// maxTokens sets the reply's limit in tokens: max_tokens, or
// max_completion_tokens ([Config].MaxCompletionTokens).
func (m *Model) maxTokens(p *oai.ChatCompletionNewParams, n int) {
	if m.cfg.MaxCompletionTokens {
		p.MaxCompletionTokens = param.NewOpt(int64(n))
	} else {
		p.MaxTokens = param.NewOpt(int64(n))
	}
}
