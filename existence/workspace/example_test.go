package workspace_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/existence-loop/sdk/existence"
	"github.com/existence-loop/sdk/existence/event"
	"github.com/existence-loop/sdk/existence/toolloop"
	"github.com/existence-loop/sdk/existence/workspace"
	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/llm"
	"github.com/existence-loop/sdk/llm/llmtest"
)

func ExampleClean() {
	for _, p := range []string{"./notes//today.md", "../etc/passwd", `C:\Windows`} {
		c, err := workspace.Clean(p)
		fmt.Printf("%q %v\n", c, err)
	}
	// Output:
	// "notes/today.md" <nil>
	// "" invalid path "../etc/passwd": ".." components are not allowed
	// "" invalid path "C:\\Windows": backslashes are not allowed; use "/" as the separator
}

func ExampleWorkspace_Tools() {
	dir, err := os.MkdirTemp("", "workspace-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	ws, err := workspace.Open(filepath.Join(dir, "vault"), workspace.Limits{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer ws.Close()

	call := func(name, args string) llm.ToolCall {
		return llm.ToolCall{Name: name, Arguments: json.RawMessage(args)}
	}
	// A scripted model that builds a file, tries to leave the workspace,
	// looks around, reads back what it wrote and reports.
	model := llmtest.NewFake(
		llmtest.Reply{ToolCalls: []llm.ToolCall{call("write_file", `{"path":"plans/garden.md","content":"# Garden\n"}`)}},
		llmtest.Reply{ToolCalls: []llm.ToolCall{call("read_file", `{"path":"../../etc/passwd"}`)}},
		llmtest.Reply{ToolCalls: []llm.ToolCall{call("append_file", `{"path":"plans/garden.md","content":"- plant cedars\n"}`)}},
		llmtest.Reply{ToolCalls: []llm.ToolCall{call("list_files", `{"path":"plans"}`)}},
		llmtest.Reply{ToolCalls: []llm.ToolCall{call("read_file", `{"path":"plans/garden.md"}`)}},
		llmtest.Reply{Text: "Wrote plans/garden.md."},
	)
	exec, err := toolloop.New(toolloop.Config{Model: model, Tools: ws.Tools()})
	if err != nil {
		fmt.Println(err)
		return
	}
	out, err := exec.Execute(context.Background(), existence.Assignment{
		AgentName: "Vault",
		Goal:      identity.Goal{Objective: "plan a garden"},
		Report: func(e event.Event) {
			fmt.Printf("%s: %q\n", e.Tool.Name, e.Tool.Result)
		},
	})
	fmt.Println(out.Status, out.Summary, out.Artifacts, err)
	for _, d := range out.Discoveries {
		fmt.Printf("found %s (%s)\n", d.Text, d.Source)
	}
	// Output:
	// write_file: "wrote 9 bytes to plans/garden.md"
	// read_file: "Error: invalid path \"../../etc/passwd\": \"..\" components are not allowed"
	// append_file: "appended 15 bytes to plans/garden.md (now 24 bytes)"
	// list_files: "plans/garden.md (24 bytes)"
	// read_file: "# Garden\n- plant cedars\n"
	// DONE Wrote plans/garden.md. [plans/garden.md] <nil>
	// found first line "# Garden" (plans/garden.md)
}
