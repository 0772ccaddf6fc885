package cli

// MCP both ways: -mcp and -mcp-config give the agents the tools of MCP
// servers; -mcp-serve makes the running trio an MCP server on stdin and
// stdout, for an AI assistant.

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/existence-loop/sdk/existence/requests"
	"github.com/existence-loop/sdk/existence/runner"
	"github.com/existence-loop/sdk/existence/toolloop"
	"github.com/existence-loop/sdk/existence/toolloop/mcptools"
	"github.com/existence-loop/sdk/mcpserver"
	"github.com/existence-loop/sdk/task"
)

// mcpOptions are the MCP flags.
type mcpOptions struct {
	servers []mcptools.ServerConfig // -mcp, repeatable
	config  string                  // -mcp-config
	serve   bool                    // -mcp-serve
	events  *mcpserver.EventLog     // recent events for agent_events
}

// mcpFlags registers -mcp, -mcp-config and -mcp-serve.
func mcpFlags(fs *flag.FlagSet, o *mcpOptions) {
	fs.Func("mcp", "give the agents the tools of an MCP server: NAME=COMMAND [ARG...] (stdio) or NAME=URL (streamable HTTP); repeatable; tools appear as NAME__TOOL", func(v string) error {
		s, err := mcptools.ParseFlag(v)
		if err != nil {
			return err
		}
		o.servers = append(o.servers, s)
		return nil
	})
	fs.StringVar(&o.config, "mcp-config", "", `MCP servers from a JSON file ({"mcpServers": {NAME: {"command", "args", "env", "url", "headers", "allow", "timeout", "max_result_bytes", "non_text"}}})`)
	fs.BoolVar(&o.serve, "mcp-serve", false, "serve the running trio over MCP on stdin/stdout for an AI assistant (events go to stderr; no typed host messages)")
	o.events = mcpserver.NewEventLog(0)
}

// connectMCP connects the configured MCP servers (none in a dry run) and
// returns their tools (their questions to the user go to reqs, under the
// asking agent, else agent), a line for the world text, and a function that
// stops them.
func connectMCP(ctx context.Context, o *runOptions, reqs *requests.Queue, agent string, log *slog.Logger, stderr io.Writer) ([]toolloop.Tool, string, func(), error) {
	servers := o.mcp.servers
	if o.mcp.config != "" {
		fromFile, err := mcptools.LoadFile(o.mcp.config)
		if err != nil {
			return nil, "", nil, fmt.Errorf("-mcp-config: %w", err)
		}
		servers = append(servers, fromFile...)
	}
	if len(servers) == 0 || o.dryRun {
		return nil, "", func() {}, nil
	}
	// A stdio server's standard error goes to the trio's when that is a
	// file (the process inherits it); other writers are not safe for the
	// copying goroutine exec would start, so it is discarded then.
	if f, ok := stderr.(*os.File); ok {
		for i := range servers {
			servers[i].Stderr = f
		}
	}
	// A server's question during a call goes to the person, as ask_human's.
	set, err := mcptools.Connect(ctx, mcptools.Config{Servers: servers, Logger: log,
		Elicit: elicitHuman(reqs, agent, elicitPoll)})
	if err != nil {
		return nil, "", nil, fmt.Errorf("-mcp: %w", err)
	}
	tools := set.Tools()
	var names []string
	for _, t := range tools {
		names = append(names, t.Name())
	}
	world := "You also have tools from MCP servers (each name starts with its server's name): " + strings.Join(names, ", ") + "."
	fmt.Fprintf(stderr, "trio: MCP tools: %s\n", strings.Join(names, ", "))
	return tools, world, func() {
		if err := set.Close(); err != nil {
			fmt.Fprintln(stderr, "trio: closing MCP servers:", err)
		}
	}, nil
}

// serveMCP serves the runner over MCP on stdin and stdout. The returned
// context ends when the assistant disconnects, which stops the trio (the
// assistant started it).
func serveMCP(ctx context.Context, o *runOptions, rn *runner.Runner, tasks task.Queue, reqs *requests.Queue, stdout, stderr io.Writer) (context.Context, error) {
	if o.stdin == nil {
		return nil, errors.New("-mcp-serve needs standard input")
	}
	srv, err := mcpserver.New(mcpserver.Config{
		Agents: rn, Tasks: tasks, Requests: reqs, Events: o.mcp.events,
		Name: "existence-loop-trio", Logger: logger(stderr),
	})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		defer cancel()
		err := srv.Serve(ctx, o.stdin, stdout)
		if ctx.Err() == nil {
			fmt.Fprintln(stderr, "trio: the MCP client disconnected; stopping", err)
		}
	}()
	return ctx, nil
}
