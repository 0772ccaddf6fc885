package main

import (
	"context"
	"fmt"
	"os"

	"github.com/existence-loop/sdk/existence/toolloop/mcptools/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	refuse := os.Getenv("TESTSERVER_FAIL_START") != ""
	if f := os.Getenv("TESTSERVER_FAIL_IF_EXISTS"); f != "" {
		if _, err := os.Stat(f); err == nil {
			refuse = true
		}
	}
	if refuse {
		fmt.Fprintln(os.Stderr, "testserver: refusing to start")
		os.Exit(1)
	}
	s := testserver.New(true)
	if name := os.Getenv("TESTSERVER_DUPLICATE_TOOL"); name != "" {
		testserver.ListTwice(s, name)
	}
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, "testserver:", err)
		os.Exit(1)
	}
}
