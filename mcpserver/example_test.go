package mcpserver_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"

	"github.com/existence-loop/sdk/existence"
	"github.com/existence-loop/sdk/existence/runner"
	"github.com/existence-loop/sdk/llm/llmtest"
	"github.com/existence-loop/sdk/mcpserver"
	"github.com/existence-loop/sdk/monitor"
	"github.com/existence-loop/sdk/store/memstore"
	"github.com/existence-loop/sdk/store/taskqueue"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A runner's agents behind an MCP server, driven by an MCP client. Here
// the client is in process; an assistant reaches the same server over
// stdio (Server.ServeStdio) or streamable HTTP (Server.Handler).
func ExampleNew() {
	ctx := context.Background()
	events := mcpserver.NewEventLog(0)
	rn, err := runner.New(runner.Config{Store: memstore.New(), Observer: events.Observe})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer rn.Close()
	model := llmtest.NewFake(llmtest.Reply{Text: `{"action":"goal","content":"map the workspace","reasoning":"I know nothing yet"}`})
	scout, err := rn.Add(ctx, existence.Config{ID: "scout", Name: "Cedar", Model: model})
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := scout.Tick(ctx); err != nil { // one existence cycle: a goal
		fmt.Println(err)
		return
	}

	srv, err := mcpserver.New(mcpserver.Config{
		Agents: rn, Tasks: taskqueue.NewMemory(taskqueue.Options{}), Events: events,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	clientSide, serverSide := mcp.NewInMemoryTransports()
	if _, err := srv.MCP().Connect(ctx, serverSide, nil); err != nil {
		fmt.Println(err)
		return
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "assistant", Version: "1"}, nil).Connect(ctx, clientSide, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer cs.Close()

	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "agent_events",
		Arguments: map[string]any{"agent_id": "scout", "kinds": []string{"goal_chosen"}}})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Content[0].(*mcp.TextContent).Text != "[]")
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "send_message",
		Arguments: map[string]any{"text": "write down what you find"}})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Content[0].(*mcp.TextContent).Text)
	fmt.Println(scout.State().Host[0].Text)
	// Output:
	// true
	// delivered to every agent
	// write down what you find
}

// The MCP server over streamable HTTP, served by monitor.NewServer (safe
// timeouts) on a loopback address, with a bearer token.
func ExampleServer_Handler() {
	ctx := context.Background()
	rn, err := runner.New(runner.Config{Store: memstore.New()})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer rn.Close()
	model := llmtest.NewFake()
	if _, err := rn.Add(ctx, existence.Config{ID: "scout", Name: "Cedar", Model: model}); err != nil {
		fmt.Println(err)
		return
	}
	srv, err := mcpserver.New(mcpserver.Config{Agents: rn, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		fmt.Println(err)
		return
	}
	addr := "127.0.0.1:0"
	h, err := srv.Handler(mcpserver.HTTPConfig{Token: "s3cret", Addr: addr}) // sessions: 30 min idle, at most 1,000
	if err != nil {
		fmt.Println(err)
		return
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	hs := monitor.NewServer(addr, mux)
	ln, err := net.Listen("tcp", hs.Addr)
	if err != nil {
		fmt.Println(err)
		return
	}
	go hs.Serve(ln)
	defer hs.Shutdown(ctx)

	cs, err := mcp.NewClient(&mcp.Implementation{Name: "assistant", Version: "1"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: "http://" + ln.Addr().String() + "/mcp", HTTPClient: &http.Client{Transport: bearer{"s3cret"}}}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "list_agents", Arguments: map[string]any{}})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(strings.Contains(res.Content[0].(*mcp.TextContent).Text, `"name": "Cedar"`))
	// Output:
	// true
}
