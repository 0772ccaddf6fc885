// Package testserver is the MCP server the mcptools tests talk to, in
// process (through the MCP Go SDK's in-memory transport) and as a real
// stdio subprocess (testdata/server). [New] builds it with a fixed set of
// tools that echo, return large or non-text results, block, fail and
// crash, so that every failure mode of a tool call can be tested;
// [ListTwice] makes it list one tool twice.
package testserver
