// Package npmtest finds, for tests, the third-party tools installed from
// npm that they drive: the MCP conformance tester, the MCP Inspector CLI,
// the reference MCP servers (server-everything, server-filesystem),
// axe-core, and the A2A JavaScript SDK (@a2a-js/sdk, with express for its
// server), with the Node.js 22 they need (npm's "node" package, since a
// distribution's Node may be older than the 22.19 the Inspector and the
// tester require).
//
// The tools live outside the work tree, in $EXISTENCE_NPM or by default
// $HOME/.cache/existence-npm, installed from the pinned list in
// .ci/npm/package.json ([InstallHint]; .ci/run does it). A test calls
// [Bin] or [File], which skip it with that one-line hint when the tool is
// missing, and runs the tool with [Env], whose PATH starts with the
// installed bin directory so that "node" is the pinned one.
package npmtest
