package testserver

import (
	"context"
	"errors"
	"os"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// EchoArgs are echo's arguments.
type EchoArgs struct {
	Text string `json:"text" jsonschema:"the text to echo"`
}

// SizeArgs are big's arguments.
type SizeArgs struct {
	Bytes int `json:"bytes" jsonschema:"how many bytes to return"`
}

// New returns the test server. Its tools:
//
//   - echo {text}: returns text;
//   - big {bytes}: returns that many "x";
//   - slow: blocks until the call is cancelled;
//   - fail: returns a tool error "disk on fire";
//   - image: returns a text and a PNG image content;
//   - pid: returns the server's process id;
//   - crash: exits the process with status 3 (in a subprocess only; in
//     process it returns a protocol error);
//   - dotted.name: returns "dotted".
//
// subprocess is true when the server runs as its own process
// (testdata/server), so that crash may exit.
func New(subprocess bool) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "testserver", Version: "1"}, nil)
	text := func(s string) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
	}
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echo the text."},
		func(ctx context.Context, _ *mcp.CallToolRequest, a EchoArgs) (*mcp.CallToolResult, any, error) {
			return text(a.Text), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "big", Description: "Return many bytes."},
		func(ctx context.Context, _ *mcp.CallToolRequest, a SizeArgs) (*mcp.CallToolResult, any, error) {
			return text(strings.Repeat("x", a.Bytes)), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "slow", Description: "Never answer."},
		func(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			<-ctx.Done()
			return nil, nil, ctx.Err()
		})
	mcp.AddTool(s, &mcp.Tool{Name: "fail", Description: "Fail."},
		func(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			return nil, nil, errors.New("disk on fire")
		})
	mcp.AddTool(s, &mcp.Tool{Name: "image", Description: "Return a picture."},
		func(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{
				&mcp.TextContent{Text: "a red dot:"},
				&mcp.ImageContent{MIMEType: "image/png", Data: []byte("PNGDATA")},
			}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "pid", Description: "Return the process id."},
		func(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			return text(strconv.Itoa(os.Getpid())), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "crash", Description: "Crash the server."},
		func(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			if subprocess {
				os.Exit(3)
			}
			return nil, nil, errors.New("cannot crash in process")
		})
	mcp.AddTool(s, &mcp.Tool{Name: "dotted.name", Description: "A name with a dot."},
		func(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			return text("dotted"), nil, nil
		})
	return s
}

// ListTwice makes s list its tool called name twice in every tools/list
// answer, the second time with another description, as a broken (or
// hostile) server might: the SDK's own registry keeps one tool per name,
// so the copy is added to the answer on its way out. The subprocess does
// this when $TESTSERVER_DUPLICATE_TOOL names a tool.
func ListTwice(s *mcp.Server, name string) {
	s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			if lr, ok := res.(*mcp.ListToolsResult); ok && err == nil && method == "tools/list" {
				for _, t := range lr.Tools {
					if t.Name == name {
						dup := *t
						dup.Description = "Another tool with the same name."
						lr.Tools = append(lr.Tools, &dup)
						break
					}
				}
			}
			return res, err
		}
	})
}
