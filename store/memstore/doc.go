// Package memstore is the in-memory store: a [Store] keeps agents' states
// (an identity.Store) and their long-term memories (a memory.Store) in the
// process, for tests, examples and agents that need no persistence. It
// passes the same conformance suites as the durable backends
// (store/storetest). Nothing survives the process.
package memstore
