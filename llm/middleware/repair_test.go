package middleware_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/llm"
	"github.com/existence-loop/sdk/llm/llmtest"
	"github.com/existence-loop/sdk/llm/middleware"
)

func goalRequest() *llm.Request {
	return &llm.Request{
		Messages: []llm.Message{
			{Role: llm.RoleSystem, Content: "You are Cedar."},
			{Role: llm.RoleUser, Content: "Choose a goal."},
		},
		Format: goalSchema,
	}
}

func TestRepairSendsOneFollowUp(t *testing.T) {
	bad := `{"thought": "I should explore"}`
	good := `{"content": "explore the workspace"}`
	fake := llmtest.NewFake(
		llmtest.Reply{Text: bad, PromptTokens: 100, OutputTokens: 10},
		llmtest.Reply{Text: good, PromptTokens: 130, OutputTokens: 12},
	)
	req := goalRequest()
	resp, err := middleware.WithRepair(fake, checkGoal).Generate(context.Background(), req)
	require.NoError(t, err)
	assert.Equal(t, good, resp.Text)
	assert.Equal(t, 230, resp.PromptTokens, "tokens summed over both calls")
	assert.Equal(t, 22, resp.OutputTokens)

	reqs := fake.Requests()
	require.Len(t, reqs, 2, "exactly one follow-up")
	assert.Equal(t, goalRequest(), reqs[0])
	assert.Len(t, req.Messages, 2, "the caller's request is not modified")

	follow := reqs[1]
	assert.JSONEq(t, string(goalSchema), string(follow.Format), "the follow-up asks for the same format")
	require.Len(t, follow.Messages, 4)
	assert.Equal(t, goalRequest().Messages, follow.Messages[:2])
	assert.Equal(t, llm.Message{Role: llm.RoleAssistant, Content: bad}, follow.Messages[2])
	assert.Equal(t, llm.Message{
		Role: llm.RoleUser,
		Content: "Your previous reply is not valid: jsonschema: '/content' does not validate: expected string\n\n" +
			"Reply again with the corrected JSON object only: no prose, no code fences, no explanation.",
	}, follow.Messages[3])
}

func TestRepairFailsTwice(t *testing.T) {
	fake := llmtest.NewFake(
		llmtest.Reply{Text: `{"thought": "a"}`},
		llmtest.Reply{Text: `{"content": 7}`},
		llmtest.Reply{Text: `{"content": "never sent"}`},
	)
	resp, err := middleware.WithRepair(fake, checkGoal).Generate(context.Background(), goalRequest())
	require.Error(t, err)
	assert.Nil(t, resp)
	assert.Equal(t, 2, fake.Calls(), "at most one repair")
	require.ErrorIs(t, err, llm.ErrInvalidOutput)
	var ie *llm.InvalidOutputError
	require.ErrorAs(t, err, &ie)
	assert.True(t, ie.Repaired)
	assert.Equal(t, `{"content": 7}`, ie.Text, "the last text is kept for the caller")
	assert.EqualError(t, ie.Err, "jsonschema: '/content' does not validate: expected string")
	assert.Equal(t, "llm: invalid reply after one repair: jsonschema: '/content' does not validate: expected string", err.Error())
	assert.Equal(t, "invalid_output", middleware.Classify(err))
	assert.False(t, middleware.Retryable(err))
}

func TestRepairPassThrough(t *testing.T) {
	checked := 0
	check := func(s string) error { checked++; return checkGoal(s) }

	t.Run("valid first reply", func(t *testing.T) {
		checked = 0
		fake := llmtest.NewFake(llmtest.Reply{Text: `{"content":"x"}`})
		_, err := middleware.WithRepair(fake, check).Generate(context.Background(), goalRequest())
		require.NoError(t, err)
		assert.Equal(t, 1, fake.Calls())
		assert.Equal(t, 1, checked)
	})
	t.Run("no format", func(t *testing.T) {
		checked = 0
		fake := llmtest.NewFake(llmtest.Reply{Text: "free text"})
		req := goalRequest()
		req.Format = nil
		resp, err := middleware.WithRepair(fake, check).Generate(context.Background(), req)
		require.NoError(t, err)
		assert.Equal(t, "free text", resp.Text)
		assert.Equal(t, 0, checked)
	})
	t.Run("tool calls", func(t *testing.T) {
		checked = 0
		fake := llmtest.NewFake(llmtest.Reply{ToolCalls: []llm.ToolCall{{ID: "call_0", Name: "read_file", Arguments: json.RawMessage(`{}`)}}})
		resp, err := middleware.WithRepair(fake, check).Generate(context.Background(), goalRequest())
		require.NoError(t, err)
		assert.Len(t, resp.ToolCalls, 1)
		assert.Equal(t, 0, checked)
	})
	t.Run("first call fails", func(t *testing.T) {
		checked = 0
		fake := llmtest.NewFake(llmtest.Reply{Err: status(503)})
		_, err := middleware.WithRepair(fake, check).Generate(context.Background(), goalRequest())
		assert.Equal(t, status(503), err)
		assert.Equal(t, 0, checked)
	})
	t.Run("nil check", func(t *testing.T) {
		fake := llmtest.NewFake()
		assert.Same(t, fake, middleware.WithRepair(fake, nil))
	})
}

func TestRepairCallFails(t *testing.T) {
	fake := llmtest.NewFake(llmtest.Reply{Text: "not json"}, llmtest.Reply{Err: status(503)})
	_, err := middleware.WithRepair(fake, checkGoal).Generate(context.Background(), goalRequest())
	require.ErrorIs(t, err, status(503))
	require.ErrorIs(t, err, llm.ErrInvalidOutput)
	var ie *llm.InvalidOutputError
	require.ErrorAs(t, err, &ie)
	assert.False(t, ie.Repaired)
	assert.Equal(t, "not json", ie.Text)
}

func TestRepairSkippedAfterCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	m := llmtest.Func(func(context.Context, *llm.Request) (*llm.Response, error) {
		cancel()
		return &llm.Response{Text: "{}"}, nil
	})
	_, err := middleware.WithRepair(m, checkGoal).Generate(ctx, goalRequest())
	var ie *llm.InvalidOutputError
	require.ErrorAs(t, err, &ie)
	assert.False(t, ie.Repaired)
}

func TestRepairPrompt(t *testing.T) {
	assert.Equal(t,
		"Your previous reply is not valid: at '/goals/0': boom\n\nReply again with the corrected JSON object only: no prose, no code fences, no explanation.",
		middleware.RepairPrompt(errors.New("at '/goals/0': boom")))
}

// TestRepairParseReturnsTheParsedValue: the value parse made of the valid
// reply travels with it, whether the first reply was valid or the repair
// was; a request without Format passes through without one.
func TestRepairParseReturnsTheParsedValue(t *testing.T) {
	parse := func(text string) (any, error) {
		var v struct {
			Content string `json:"content"`
		}
		if err := json.Unmarshal([]byte(text), &v); err != nil || v.Content == "" {
			return nil, errors.New("/content: missing")
		}
		return v.Content, nil
	}
	fake := llmtest.NewFake(
		llmtest.Reply{Text: `{"content": "first"}`},
		llmtest.Reply{Text: `{"nope": 1}`},
		llmtest.Reply{Text: `{"content": "repaired"}`},
		llmtest.Reply{Text: "plain"},
	)
	m := middleware.WithRepairParse(fake, parse)
	for _, want := range []string{"first", "repaired"} {
		resp, err := m.Generate(context.Background(), goalRequest())
		require.NoError(t, err)
		assert.Equal(t, want, resp.Parsed)
	}
	resp, err := m.Generate(context.Background(), &llm.Request{Messages: goalRequest().Messages})
	require.NoError(t, err)
	assert.Nil(t, resp.Parsed, "no Format: nothing parsed")
	assert.Same(t, fake, middleware.WithRepairParse(fake, nil), "a nil parse returns the model")
}
