// Package mcptools offers the tools of MCP (Model Context Protocol) servers
// to a toolloop.Executor, next to the workspace tools: the agents gain
// capabilities from any MCP server.
//
// [Connect] starts each configured server, a command spoken to over stdio
// (command, arguments, environment) or a streamable HTTP endpoint (URL and
// optional headers, e.g. for a bearer token), performs the MCP handshake
// and lists its tools. [Set.Tools] returns them as toolloop.Tool values,
// for toolloop.Config.Tools:
//
//	set, err := mcptools.Connect(ctx, mcptools.Config{Servers: []mcptools.ServerConfig{
//		{Name: "fs", Command: "mcp-fs", Args: []string{"/srv"}, Allow: []string{"read_file"}},
//	}})
//	...
//	defer set.Close()
//	exec, err := toolloop.New(toolloop.Config{Tools: append(ws.Tools(), set.Tools()...)})
//
// The configuration decides what an agent may use:
//
//   - an allow-list of tool names per server ([ServerConfig].Allow; empty
//     allows every tool the server lists);
//   - a per-tool timeout (default 60 s, the tool loop's own default);
//   - a cap on result size (default 256 KiB, like read_file's);
//   - text results only, unless [ServerConfig].NonText opts in to images,
//     audio and binary resources (as data: URLs).
//
// The model sees each tool as "{server}__{tool}" (e.g. "fs__read_file"):
// server names cannot contain "_", so tools of different servers never
// collide, with each other or with the workspace tools. The description is
// the server's, marked with the server's name; the input schema is the
// server's, and the executor validates the model's arguments against it
// before the call.
//
// A server that is down, slow, crashes mid-call, or returns a protocol
// error, a tool error or a malformed result ends that one call as a failed
// tool call: the model reads a message naming the server, the tool and what
// went wrong, an [Event] is delivered to [Config].Observer (and logged),
// and the executor's own tool_call event records the failure. No call waits
// past its timeout. A stdio server that exits is restarted at the next call
// once its backoff has passed (1 s, doubling after each failure in a row up
// to 1 min, reset by a successful call); until then its tools fail at once
// with a [*DownError]. The protocol itself is the official Go SDK's,
// github.com/modelcontextprotocol/go-sdk.
//
// A tool whose execution.taskSupport is "required" can only run as a
// task. Over streamable HTTP to a server that speaks MCP 2026-07-28 and
// declares the Tasks extension ([TasksExtension]) such a tool is offered
// and called as a task: tools/call with the extension declared in the
// request's _meta, then tasks/get at the server's pollIntervalMs (within
// [MinTaskPoll] and [MaxTaskPoll]) until the task is completed, failed or
// cancelled, within the call's timeout and with every reply capped like
// any other; a task that asks for input, or outlives the timeout, is
// canceled with tasks/cancel. Elsewhere such a tool is not offered
// ([EventToolNotOffered]).
//
// Servers are connected at [Connect]: the tool list is fixed then, and a
// server that cannot be started or listed at that point is an error, so
// that a misconfiguration is seen at start-up rather than by the model.
//
// The trio example takes -mcp NAME=COMMAND (see [ParseFlag]) and
// -mcp-config FILE (see [LoadFile]).
package mcptools
