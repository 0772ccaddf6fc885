// Package hostaccess holds what every server of a host program's agents
// serves from — the monitor, the MCP server and the A2A server — so that
// none of them stands on another:
//
//   - [Auth], the checks in front of each handler: the Host header against
//     DNS rebinding, the bearer token (or a session cookie a page got with
//     ?token=), and the CSRF token of a session;
//   - the token rules for a server other machines can reach: [Loopback],
//     [CheckToken] (the weak-token rule, [ErrWeakToken]) and
//     [GenerateToken];
//   - [Agents], what a server needs of the agents of this process
//     (*runner.Runner satisfies it), and [Single] for one agent.
//
// Share one [Auth] between the handlers served on one address, so that a
// session opened on the monitor's page also passes the MCP endpoint:
//
//	auth := hostaccess.NewAuth(hostaccess.AuthConfig{Token: token, Addr: addr})
//	mux.Handle("/mcp", auth.Middleware(mcpHandler))
package hostaccess
