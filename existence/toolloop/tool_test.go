package toolloop_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/existence"
	"github.com/existence-loop/sdk/existence/toolloop"
	"github.com/existence-loop/sdk/identity"
)

type inner struct {
	Level int    `json:"level" jsonschema:"minimum=0,maximum=3"`
	Tag   string `json:"tag,omitempty"`
}

type nestedArgs struct {
	Name  string   `json:"name" jsonschema_description:"Who to greet."`
	Tags  []string `json:"tags,omitempty"`
	Inner inner    `json:"inner"`
	Small int8     `json:"small,omitempty"`
}

func greet() toolloop.Tool {
	return toolloop.NewTool("greet", "Greet someone.", func(ctx context.Context, a nestedArgs) (string, error) {
		return "hello " + a.Name + " at level " + string(rune('0'+a.Inner.Level)), nil
	})
}

func TestNewToolSchema(t *testing.T) {
	tool := greet()
	assert.Equal(t, "greet", tool.Name())
	assert.Equal(t, "Greet someone.", tool.Description())
	schema := string(tool.Schema())
	assert.JSONEq(t, `{
		"type": "object",
		"properties": {
			"name":  {"type": "string", "description": "Who to greet."},
			"tags":  {"type": "array", "items": {"type": "string"}},
			"inner": {
				"type": "object",
				"properties": {
					"level": {"type": "integer", "minimum": 0, "maximum": 3},
					"tag":   {"type": "string"}
				},
				"required": ["level"],
				"additionalProperties": false
			},
			"small": {"type": "integer"}
		},
		"required": ["name", "inner"],
		"additionalProperties": false
	}`, schema)
	for _, banned := range []string{"$ref", "$defs", "$schema", "$id"} {
		assert.NotContains(t, schema, banned)
	}
	// Schema returns a copy.
	s := tool.Schema()
	s[0] = 'X'
	assert.Equal(t, byte('{'), tool.Schema()[0])
}

func TestNewToolCall(t *testing.T) {
	tool := greet()
	tests := []struct {
		name string
		args string
		want string
		err  string
	}{
		{"object", `{"name":"Vault","inner":{"level":2}}`, "hello Vault at level 2", ""},
		{"object in a string", `"{\"name\":\"Vault\",\"inner\":{\"level\":1}}"`, "hello Vault at level 1", ""},
		{"surrounding space", " \n{\"name\":\"V\",\"inner\":{\"level\":0}}\n ", "hello V at level 0", ""},
		{"empty", ``, "", "invalid arguments: /: missing properties: 'name', 'inner'"},
		{"null", `null`, "", "invalid arguments: /: missing properties: 'name', 'inner'"},
		{"empty string", `""`, "", "invalid arguments: /: missing properties: 'name', 'inner'"},
		{"nested violation", `{"name":"V","inner":{"level":7}}`, "", "invalid arguments: /inner/level: must be <= 3 but found 7"},
		{"two violations", `{"name":1,"inner":{"level":0,"x":1}}`, "", "invalid arguments: /inner: additionalProperties 'x' not allowed; /name: expected string, but got number"},
		{"trailing data", `{"name":"V","inner":{"level":0}} {}`, "", "invalid arguments: /: not valid JSON: data after the object"},
		{"string of garbage", `"not json"`, "", "invalid arguments: /: not valid JSON: invalid character 'o' in literal null (expecting 'u')"},
		{"string of a string", `"\"{}\""`, "", "invalid arguments: /: expected a JSON object of arguments, got a string"},
		{"number", `42`, "", "invalid arguments: /: expected a JSON object of arguments, got a number"},
		{"bad string escape", `"\x"`, "", "invalid arguments: /: not valid JSON: invalid character 'x' in string escape code"},
		{"key named twice", `{"name":"Vault","name":"Cipher","inner":{"level":0}}`, "", `invalid arguments: /: duplicate key "name" at /name; send each argument once`},
		{"key named twice, nested and escaped", `{"name":"V","inner":{"level":0,"l\u0065vel":3}}`, "", `invalid arguments: /: duplicate key "level" at /inner/level; send each argument once`},
		{"key named twice in a string", `"{\"name\":\"V\",\"name\":\"W\",\"inner\":{\"level\":1}}"`, "", `invalid arguments: /: duplicate key "name" at /name; send each argument once`},
		{"int8 overflow", `{"name":"V","inner":{"level":0},"small":300}`, "", "invalid arguments: /: json: cannot unmarshal number 300 into Go struct field nestedArgs.small of type int8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tool.Call(context.Background(), json.RawMessage(tt.args))
			if tt.err == "" {
				require.NoError(t, err)
				assert.Equal(t, tt.want, got)
				return
			}
			require.Error(t, err)
			assert.Equal(t, tt.err, err.Error())
			assert.ErrorIs(t, err, toolloop.ErrInvalidArguments)
			var ae *toolloop.ArgumentError
			require.True(t, errors.As(err, &ae))
			assert.NotEmpty(t, ae.Problems)
		})
	}
}

func TestNewToolNotAStruct(t *testing.T) {
	tool := toolloop.NewTool("n", "", func(context.Context, []string) (string, error) { return "ran", nil })
	got, err := tool.Call(context.Background(), json.RawMessage(`{}`))
	require.EqualError(t, err, `toolloop: tool "n": argument type []string is not a struct`)
	assert.Empty(t, got)
}

func TestCollectArtifacts(t *testing.T) {
	toolloop.ReportArtifact(context.Background(), "ignored") // outside a call: no effect, no panic
	ctx, list := toolloop.CollectArtifacts(context.Background())
	toolloop.ReportArtifact(ctx, "a.md")
	toolloop.ReportArtifact(ctx, "b.md")
	toolloop.ReportArtifact(ctx, "a.md")
	toolloop.ReportArtifact(ctx, "")
	assert.Equal(t, []string{"a.md", "b.md"}, list())
	got := list()
	got[0] = "changed"
	assert.Equal(t, []string{"a.md", "b.md"}, list(), "list returns a copy")
}

func TestCollectDiscoveries(t *testing.T) {
	at := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name   string
		report []identity.Discovery
		want   []identity.Discovery
	}{
		{name: "none", want: []identity.Discovery{}},
		{
			name:   "in order",
			report: []identity.Discovery{{Text: "b", Source: "b.md"}, {Text: "a", Source: "a.md", At: at}},
			want:   []identity.Discovery{{Text: "b", Source: "b.md"}, {Text: "a", Source: "a.md", At: at}},
		},
		{
			name: "same source: latest text, first place",
			report: []identity.Discovery{
				{Text: "old", Source: "a.md"}, {Text: "b", Source: "b.md"}, {Text: "new", Source: "a.md", At: at},
			},
			want: []identity.Discovery{{Text: "new", Source: "a.md", At: at}, {Text: "b", Source: "b.md"}},
		},
		{
			name: "no source: the same text once",
			report: []identity.Discovery{
				{Text: "rumour"}, {Text: "fact"}, {Text: " rumour "}, {Text: "rumour", Source: "x.md"},
			},
			want: []identity.Discovery{{Text: "rumour"}, {Text: "fact"}, {Text: "rumour", Source: "x.md"}},
		},
		{
			name:   "trimmed; blank text ignored",
			report: []identity.Discovery{{Text: "  \n", Source: "a.md"}, {Text: "\tfound it\n", Source: " a.md "}, {}},
			want:   []identity.Discovery{{Text: "found it", Source: "a.md"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, list := toolloop.CollectDiscoveries(context.Background())
			for _, d := range tt.report {
				toolloop.ReportDiscovery(ctx, d)
			}
			got := list()
			if got == nil {
				got = []identity.Discovery{}
			}
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestCollectorsAreIndependent(t *testing.T) {
	// Nesting one collector in another does not hide the outer one's kind.
	toolloop.ReportDiscovery(context.Background(), identity.Discovery{Text: "ignored"})
	ctx, artifacts := toolloop.CollectArtifacts(context.Background())
	ctx, discoveries := toolloop.CollectDiscoveries(ctx)
	toolloop.ReportArtifact(ctx, "out.md")
	toolloop.ReportDiscovery(ctx, identity.Discovery{Text: "in.md: hello", Source: "in.md"})
	assert.Equal(t, []string{"out.md"}, artifacts())
	assert.Equal(t, []identity.Discovery{{Text: "in.md: hello", Source: "in.md"}}, discoveries())
}

func TestCollectConcurrently(t *testing.T) {
	ctx, artifacts := toolloop.CollectArtifacts(context.Background())
	ctx, discoveries := toolloop.CollectDiscoveries(ctx)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 10 {
				p := fmt.Sprintf("f%d.md", j)
				toolloop.ReportArtifact(ctx, p)
				toolloop.ReportDiscovery(ctx, identity.Discovery{Text: fmt.Sprint("seen by ", i), Source: p})
			}
		}()
	}
	wg.Wait()
	assert.Len(t, artifacts(), 10)
	assert.Len(t, discoveries(), 10)
}

func TestCaller(t *testing.T) {
	_, ok := toolloop.Caller(context.Background())
	assert.False(t, ok, "no caller outside a tool call")
	a := existence.Assignment{AgentID: "scout", AgentName: "Cedar", Goal: identity.Goal{ID: "g1", Objective: "map the vault"}}
	got, ok := toolloop.Caller(toolloop.WithCaller(context.Background(), a))
	require.True(t, ok)
	assert.Equal(t, "scout", got.AgentID)
	assert.Equal(t, "Cedar", got.AgentName)
	assert.Equal(t, "map the vault", got.Goal.Objective)
}

func FuzzToolArguments(f *testing.F) {
	for _, s := range []string{
		`{"name":"Vault","inner":{"level":2}}`,
		`"{\"name\":\"Vault\",\"inner\":{\"level\":1}}"`,
		``, `null`, `""`, `"\"\""`, `[]`, `{"name":`, `{"name":"a"}}`,
		`{"name":"V","inner":{"level":1e400}}`,
		`{"name":"V","inner":{"level":-0.0},"small":-129}`,
		`{"name":"\ud800","inner":{"level":0}}`,
		"\xff\xfe{}", `{"tags":[1,{"a":[[[[]]]]}]}`,
	} {
		f.Add(s)
	}
	tool := greet()
	f.Fuzz(func(t *testing.T, args string) {
		got, err := tool.Call(context.Background(), json.RawMessage(args))
		if err != nil {
			require.ErrorIs(t, err, toolloop.ErrInvalidArguments)
			require.Empty(t, got, "result with error")
			return
		}
		require.True(t, strings.HasPrefix(got, "hello "), "unexpected result %q", got)
	})
}
