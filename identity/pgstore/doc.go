// Package pgstore keeps agents in PostgreSQL, so that any number of
// processes on any number of machines share one population of agents, each
// agent running in exactly one process at a time, and the agents of a
// process that dies move to the others.
//
// # One database, five things
//
// [Open] connects (one attempt, bounded by Options.ConnectTimeout) and
// brings the schema up to date. A [*Store] is then:
//
//   - an [identity.Store] (states as JSON documents with a checksum, in
//     existence_states), passing identity/storetest, with
//     [identity.Quarantiner];
//   - a [lease.Manager] ([Store.Claim], [Store.Renew],
//     [Store.Release]) and an [identity.Locker] built on the same leases;
//   - a task queue, [Store.Tasks], a [task.Source] with the
//     semantics of existence/taskqueue, claimed with SELECT … FOR UPDATE
//     SKIP LOCKED;
//   - a message box: [Store.Send] stores a peer or host message and wakes
//     the process holding the agent through LISTEN/NOTIFY; [Store.Relay]
//     hands the messages to the local agents;
//   - a keeper of small named documents, [Store.Document] (the
//     existence_documents table), such as the requests to the human (an
//     existence/requests.Backend).
//
// # Leases and fencing
//
// Every enrolled agent has a lease row: owner (host:pid), host, pid, epoch
// and expiry. [Store.Claim] leases up to max agents that no live owner
// holds, the agent due earliest first (saved longest ago), for
// Options.TTL (15 s by default), and moves each agent's epoch on by one.
// [Store.Renew] extends the leases and reports those lost; [Store.Release]
// gives them up at once on a graceful shutdown. Who holds whom is the view
// "leases" (SELECT * FROM leases WHERE live) and [Store.Leases].
//
// The epoch is a fencing token. Every save and every queue operation of a
// holder runs in one statement or transaction with a check of its epoch
// (UPDATE … WHERE epoch = $n, the lease row locked FOR SHARE), so a process
// that lost its lease — after a long pause, or a network partition whose
// held packets arrive late — can never overwrite the new owner's state: it
// gets a [*FencedError] (errors.Is [ErrFenced]) and nothing is written.
// A process that holds no lease may write an agent only while nobody holds
// a live lease on it. [Store.Fenced] binds a view to one lease, for a
// Runner's NewAgent.
//
// # What survives a crash
//
//   - A state save that returned is in the database (a transaction).
//   - A task claimed by a process that died stays assigned to its agent;
//     the agent's new holder gets it back from Next (the agent resumes its
//     goal as after a restart), and finishes it under its own epoch.
//   - A message is acknowledged by the save that first stores it in the
//     agent's state, in the same statement: sent but not saved, it waits
//     for the next holder; saved, it is in the state. Exactly once.
//
// # Memories
//
// The store is also a memory.Store, and needs no pgvector extension: the
// agents' long-term memories are rows of existence_memories (schema
// version 3), unique by agent and text, vectors as little-endian float32
// bytea. Recall needs no index in the database: the process holding an
// agent's lease is its only writer, and the memory.Memory there caches
// the agent's vectors and scans them itself. Memory writes are not
// fenced by the epoch; a holder that loses a lease drops its cache.
//
// # Errors at start
//
// A connection string that does not parse is [ErrConfig], a server that
// cannot be reached or refuses the login is [ErrUnreachable], and a
// database migrated by a newer version is [ErrSchemaTooNew]: each at once,
// with one clear message, never retried. Migrations are versioned
// (existence_migrations) and run under a PostgreSQL advisory lock, so that
// processes may start together.
package pgstore
