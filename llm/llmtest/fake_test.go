package llmtest_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/llm"
	"github.com/existence-loop/sdk/llm/llmtest"
)

func req(text string) *llm.Request {
	return &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: text}}}
}

func TestFakeReplies(t *testing.T) {
	boom := errors.New("boom")
	args := json.RawMessage(`{"path":"a"}`)
	tests := []struct {
		name    string
		reply   llmtest.Reply
		want    *llm.Response
		wantErr error
	}{
		{
			name:  "text",
			reply: llmtest.Reply{Text: "hi", Thinking: "hmm", PromptTokens: 3, OutputTokens: 1, Duration: time.Second},
			want:  &llm.Response{Model: "fake", Text: "hi", Thinking: "hmm", DoneReason: "stop", PromptTokens: 3, OutputTokens: 1, Duration: time.Second},
		},
		{
			name:  "tool calls get IDs and done reason",
			reply: llmtest.Reply{ToolCalls: []llm.ToolCall{{Name: "read", Arguments: args}, {ID: "mine", Name: "write", Arguments: args}}},
			want: &llm.Response{Model: "fake", DoneReason: "tool_calls", ToolCalls: []llm.ToolCall{
				{ID: "call_0", Name: "read", Arguments: args}, {ID: "mine", Name: "write", Arguments: args},
			}},
		},
		{
			name:  "explicit done reason kept",
			reply: llmtest.Reply{Text: "x", DoneReason: "unload"},
			want:  &llm.Response{Model: "fake", Text: "x", DoneReason: "unload"},
		},
		{name: "error as is", reply: llmtest.Reply{Err: boom, Text: "ignored"}, wantErr: boom},
		{name: "empty", reply: llmtest.Reply{}, wantErr: llm.ErrEmpty},
		{name: "whitespace is empty", reply: llmtest.Reply{Text: " \n", Thinking: "t"}, wantErr: llm.ErrEmpty},
		{name: "length", reply: llmtest.Reply{Text: "{\"a\":", DoneReason: "length"}, wantErr: llm.ErrTruncated},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := llmtest.NewFake(tc.reply)
			resp, err := f.Generate(context.Background(), req("x"))
			if tc.wantErr != nil {
				require.ErrorIs(t, err, tc.wantErr)
				assert.Nil(t, resp)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, resp)
		})
	}
}

func TestFakeErrIsReturnedUnwrapped(t *testing.T) {
	se := llm.StatusError{Provider: "ollama", StatusCode: 503, RetryAfter: 10 * time.Second}
	f := llmtest.NewFake(llmtest.Reply{Err: se})
	_, err := f.Generate(context.Background(), req("x"))
	assert.Equal(t, error(se), err)
}

func TestFakeTruncatedCarriesResponse(t *testing.T) {
	f := llmtest.NewFake(llmtest.Reply{Text: `{"a":`, DoneReason: "length", OutputTokens: 64})
	_, err := f.Generate(context.Background(), req("x"))
	var te *llm.TruncatedError
	require.ErrorAs(t, err, &te)
	assert.Equal(t, `{"a":`, te.Response.Text)
	assert.Equal(t, 64, te.Response.OutputTokens)
	assert.Equal(t, "length", te.Response.DoneReason)
}

func TestFakeModelName(t *testing.T) {
	f := llmtest.NewFake(llmtest.Reply{Text: "a"}, llmtest.Reply{Text: "b"})
	f.Model = "scripted"
	r1, err := f.Generate(context.Background(), req("x"))
	require.NoError(t, err)
	assert.Equal(t, "scripted", r1.Model)
	r := req("y")
	r.Model = "other:7b"
	r2, err := f.Generate(context.Background(), r)
	require.NoError(t, err)
	assert.Equal(t, "other:7b", r2.Model)
}

func TestFakeExhausted(t *testing.T) {
	f := llmtest.NewFake(llmtest.Reply{Text: "only"})
	_, err := f.Generate(context.Background(), req("1"))
	require.NoError(t, err)
	assert.Equal(t, 0, f.Remaining())
	_, err = f.Generate(context.Background(), req("2"))
	require.ErrorIs(t, err, llmtest.ErrExhausted)
	assert.Equal(t, 2, f.Calls(), "the failed call is recorded too")

	f.Add(llmtest.Reply{Text: "more"})
	assert.Equal(t, 1, f.Remaining())
	resp, err := f.Generate(context.Background(), req("3"))
	require.NoError(t, err)
	assert.Equal(t, "more", resp.Text)
}

func TestFakeNoRepliesAtAll(t *testing.T) {
	f := llmtest.NewFake()
	f.Repeat = true
	_, err := f.Generate(context.Background(), req("x"))
	require.ErrorIs(t, err, llmtest.ErrExhausted)
}

func TestFakeRepeat(t *testing.T) {
	f := llmtest.NewFake(llmtest.Reply{Text: "first"}, llmtest.Reply{Text: "last"})
	f.Repeat = true
	var got []string
	for i := 0; i < 4; i++ {
		resp, err := f.Generate(context.Background(), req("x"))
		require.NoError(t, err)
		got = append(got, resp.Text)
	}
	assert.Equal(t, []string{"first", "last", "last", "last"}, got)
}

func TestFakeContext(t *testing.T) {
	t.Run("canceled before the call", func(t *testing.T) {
		f := llmtest.NewFake(llmtest.Reply{Text: "x"})
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := f.Generate(ctx, req("x"))
		require.ErrorIs(t, err, context.Canceled)
		assert.Equal(t, 1, f.Calls())
	})
	t.Run("hang until deadline", func(t *testing.T) {
		f := llmtest.NewFake(llmtest.Reply{Hang: true})
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
		defer cancel()
		_, err := f.Generate(ctx, req("x"))
		require.ErrorIs(t, err, context.DeadlineExceeded)
	})
	t.Run("hang until cancel", func(t *testing.T) {
		f := llmtest.NewFake(llmtest.Reply{Hang: true})
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			_, err := f.Generate(ctx, req("x"))
			done <- err
		}()
		cancel()
		require.ErrorIs(t, <-done, context.Canceled)
	})
}

func TestFakeRecordsDeepCopies(t *testing.T) {
	f := llmtest.NewFake(llmtest.Reply{Text: "ok"})
	r := &llm.Request{
		Model:       "m",
		Messages:    []llm.Message{{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "c", Name: "n", Arguments: json.RawMessage(`{"a":1}`)}}}},
		Format:      json.RawMessage(`{"type":"object"}`),
		Tools:       []llm.ToolDef{{Name: "t", Parameters: json.RawMessage(`{"type":"object"}`)}},
		Temperature: llm.Ptr(0.5),
		Seed:        llm.Ptr(7),
		MaxTokens:   9,
	}
	_, err := f.Generate(context.Background(), r)
	require.NoError(t, err)

	// Mutate everything the caller owns.
	r.Messages[0].Role = "changed"
	r.Messages[0].ToolCalls[0].Arguments[2] = 'X'
	r.Format[2] = 'X'
	r.Tools[0].Parameters[2] = 'X'
	*r.Temperature = 9
	*r.Seed = 9

	got := f.Requests()
	require.Len(t, got, 1)
	g := got[0]
	assert.Equal(t, llm.RoleAssistant, g.Messages[0].Role)
	assert.JSONEq(t, `{"a":1}`, string(g.Messages[0].ToolCalls[0].Arguments))
	assert.JSONEq(t, `{"type":"object"}`, string(g.Format))
	assert.JSONEq(t, `{"type":"object"}`, string(g.Tools[0].Parameters))
	assert.Equal(t, 0.5, *g.Temperature)
	assert.Equal(t, 7, *g.Seed)
	assert.Equal(t, 9, g.MaxTokens)

	// Mutating what Requests returned does not change the record either.
	g.Format[2] = 'Y'
	assert.JSONEq(t, `{"type":"object"}`, string(f.Requests()[0].Format))
}

func TestFakeRecordsNilRequest(t *testing.T) {
	f := llmtest.NewFake(llmtest.Reply{Text: "ok"})
	_, err := f.Generate(context.Background(), nil)
	require.NoError(t, err)
	assert.Equal(t, []*llm.Request{nil}, f.Requests())
}

func TestFakeConcurrent(t *testing.T) {
	const n = 50
	replies := make([]llmtest.Reply, n)
	for i := range replies {
		replies[i] = llmtest.Reply{Text: fmt.Sprint(i)}
	}
	f := llmtest.NewFake(replies...)
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		seen = map[string]bool{}
	)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := f.Generate(context.Background(), req(fmt.Sprint(i)))
			if !assert.NoError(t, err) {
				return
			}
			mu.Lock()
			seen[resp.Text] = true
			mu.Unlock()
		}()
	}
	wg.Wait()
	assert.Len(t, seen, n, "every reply handed out exactly once")
	assert.Equal(t, n, f.Calls())
	assert.Len(t, f.Requests(), n)
}

func TestFunc(t *testing.T) {
	var m llm.Model = llmtest.Func(func(_ context.Context, r *llm.Request) (*llm.Response, error) {
		return &llm.Response{Text: "echo: " + r.Messages[0].Content}, nil
	})
	resp, err := m.Generate(context.Background(), req("hi"))
	require.NoError(t, err)
	assert.Equal(t, "echo: hi", resp.Text)
}

func TestSplitChunks(t *testing.T) {
	tests := []struct {
		s    string
		n    int
		want []string
	}{
		{"abcdef", 0, []string{"abcdef"}},
		{"abcdef", 1, []string{"abcdef"}},
		{"abcdef", 3, []string{"ab", "cd", "ef"}},
		{"héllo—", 2, []string{"hél", "lo—"}},
		{"ab", 4, []string{"", "a", "", "b"}},
		{"", 2, []string{"", ""}},
	}
	for _, tc := range tests {
		got := llmtest.SplitChunks(tc.s, tc.n)
		assert.Equal(t, tc.want, got, "SplitChunks(%q, %d)", tc.s, tc.n)
	}
}

func TestJSONEqual(t *testing.T) {
	assert.True(t, llmtest.JSONEqual([]byte(`{"a":1,"b":[1,2]}`), []byte(" {\"b\": [1, 2], \"a\": 1}\n")))
	assert.False(t, llmtest.JSONEqual([]byte(`{"a":1}`), []byte(`{"a":2}`)))
	assert.False(t, llmtest.JSONEqual([]byte(`{"a":1}`), []byte(`{"a":1`)))
	assert.False(t, llmtest.JSONEqual(nil, nil))
}
