// Command server is the mcptools tests' stdio MCP server (package
// testserver's tools): the tests build it with `go build` and start it as
// a subprocess. It exits with status 1 without serving when
// $TESTSERVER_FAIL_START is set, or when the file named by
// $TESTSERVER_FAIL_IF_EXISTS exists, so that tests can make a restart fail.
package main
