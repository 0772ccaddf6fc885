package toolloop_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/existence-loop/sdk/existence"
	"github.com/existence-loop/sdk/existence/event"
	"github.com/existence-loop/sdk/existence/toolloop"
	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/llm"
	"github.com/existence-loop/sdk/llm/llmtest"
)

type countArgs struct {
	Text string `json:"text" jsonschema_description:"The text whose words to count."`
}

func ExampleNewTool() {
	count := toolloop.NewTool("count_words", "Count the words of a text.",
		func(ctx context.Context, a countArgs) (string, error) {
			return fmt.Sprint(len(strings.Fields(a.Text))), nil
		})
	fmt.Println(string(count.Schema()))

	out, err := count.Call(context.Background(), json.RawMessage(`{"text":"the quick brown fox"}`))
	fmt.Println(out, err)
	_, err = count.Call(context.Background(), json.RawMessage(`{"text":42}`))
	fmt.Println(err)
	// Output:
	// {"properties":{"text":{"type":"string","description":"The text whose words to count."}},"additionalProperties":false,"type":"object","required":["text"]}
	// 4 <nil>
	// invalid arguments: /text: expected string, but got number
}

func ExampleExecutor() {
	count := toolloop.NewTool("count_words", "Count the words of a text.",
		func(ctx context.Context, a countArgs) (string, error) {
			return fmt.Sprint(len(strings.Fields(a.Text))), nil
		})
	// A scripted model: one tool call with bad arguments, one good, then
	// the final answer.
	model := llmtest.NewFake(
		llmtest.Reply{ToolCalls: []llm.ToolCall{{ID: "1", Name: "count_words", Arguments: json.RawMessage(`{"txt":"a b"}`)}}},
		llmtest.Reply{ToolCalls: []llm.ToolCall{{ID: "2", Name: "count_words", Arguments: json.RawMessage(`{"text":"to be or not to be"}`)}}},
		llmtest.Reply{Text: "The line has 6 words."},
	)
	exec, err := toolloop.New(toolloop.Config{Model: model, Tools: []toolloop.Tool{count}})
	if err != nil {
		fmt.Println(err)
		return
	}
	out, err := exec.Execute(context.Background(), existence.Assignment{
		AgentName: "Cipher",
		Goal:      identity.Goal{Objective: "count the words of a famous line"},
		Report: func(e event.Event) {
			fmt.Printf("%s -> %s\n", e.Tool.Name, e.Tool.Result)
		},
	})
	fmt.Println(out.Status, out.Steps, out.Summary, err)
	// Output:
	// count_words -> Error: invalid arguments: /: additionalProperties 'txt' not allowed; /: missing properties: 'text'
	// count_words -> 6
	// DONE 3 The line has 6 words. <nil>
}

type messageArgs struct {
	To   string `json:"to" jsonschema_description:"The agent to write to."`
	Text string `json:"text" jsonschema_description:"The message."`
}

func ExampleCaller() {
	// A send_message tool learns the sending agent from its ctx.
	send := toolloop.NewTool("send_message", "Send a message to a peer.",
		func(ctx context.Context, a messageArgs) (string, error) {
			from, ok := toolloop.Caller(ctx)
			if !ok {
				return "", fmt.Errorf("send_message: no calling agent")
			}
			fmt.Printf("[%s -> %s]: %s\n", from.AgentID, a.To, a.Text)
			return "sent to " + a.To, nil
		})
	model := llmtest.NewFake(
		llmtest.Reply{ToolCalls: []llm.ToolCall{{ID: "1", Name: "send_message", Arguments: json.RawMessage(`{"to":"vault","text":"found the map"}`)}}},
		llmtest.Reply{Text: "Told Vault about the map."},
	)
	exec, err := toolloop.New(toolloop.Config{Model: model, Tools: []toolloop.Tool{send}})
	if err != nil {
		fmt.Println(err)
		return
	}
	out, err := exec.Execute(context.Background(), existence.Assignment{
		AgentID:   "scout",
		AgentName: "Cedar",
		Goal:      identity.Goal{Objective: "share the map"},
	})
	fmt.Println(out.Status, out.Summary, err)
	// Output:
	// [scout -> vault]: found the map
	// DONE Told Vault about the map. <nil>
}

func ExampleReportDiscovery() {
	// A tool documents what it found; calling it directly, the caller
	// collects the reports (the Executor does this for every call and
	// fills Outcome.Discoveries).
	glossary := map[string]string{"cedar": "a tall evergreen tree", "moss": "a small flowerless plant"}
	lookup := toolloop.NewTool("lookup", "Look a word up in the glossary.",
		func(ctx context.Context, a countArgs) (string, error) {
			def, ok := glossary[a.Text]
			if !ok {
				return "", fmt.Errorf("%q is not in the glossary", a.Text)
			}
			toolloop.ReportDiscovery(ctx, identity.Discovery{Text: a.Text + ": " + def, Source: "glossary/" + a.Text})
			return def, nil
		})
	ctx, discoveries := toolloop.CollectDiscoveries(context.Background())
	for _, word := range []string{"cedar", "moss", "cedar", "fern"} {
		if _, err := lookup.Call(ctx, json.RawMessage(`{"text":"`+word+`"}`)); err != nil {
			fmt.Println(err)
		}
	}
	for _, d := range discoveries() {
		fmt.Printf("%s (%s)\n", d.Text, d.Source)
	}
	// Output:
	// "fern" is not in the glossary
	// cedar: a tall evergreen tree (glossary/cedar)
	// moss: a small flowerless plant (glossary/moss)
}
