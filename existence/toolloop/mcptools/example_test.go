package mcptools_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"

	"github.com/existence-loop/sdk/existence/toolloop"
	"github.com/existence-loop/sdk/existence/toolloop/mcptools"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type greetArgs struct {
	Name string `json:"name" jsonschema:"who to greet"`
}

// An MCP server's tools offered to a tool loop. The server runs in process
// here; a real configuration names a command (stdio) or a URL (streamable
// HTTP).
func ExampleConnect() {
	server := mcp.NewServer(&mcp.Implementation{Name: "greeter", Version: "1"}, nil)
	mcp.AddTool(server, &mcp.Tool{Name: "greet", Description: "Greet someone."},
		func(ctx context.Context, _ *mcp.CallToolRequest, a greetArgs) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "hello, " + a.Name}}}, nil, nil
		})
	inProcess := func() mcp.Transport {
		client, srv := mcp.NewInMemoryTransports()
		if _, err := server.Connect(context.Background(), srv, nil); err != nil {
			panic(err)
		}
		return client
	}

	ctx := context.Background()
	set, err := mcptools.Connect(ctx, mcptools.Config{
		Servers: []mcptools.ServerConfig{{Name: "hi", Transport: inProcess, Allow: []string{"greet"}}},
		Logger:  slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer set.Close()
	tools := set.Tools()
	fmt.Println(tools[0].Name(), "-", tools[0].Description())
	out, err := tools[0].Call(ctx, json.RawMessage(`{"name":"Cedar"}`))
	fmt.Println(out, err)

	// The tools go next to the workspace tools in the executor.
	_, err = toolloop.New(toolloop.Config{Tools: tools})
	fmt.Println(err)
	// Output:
	// hi__greet - [MCP server hi] Greet someone.
	// hello, Cedar <nil>
	// <nil>
}
