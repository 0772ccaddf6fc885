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
//     existence_states), passing store/storetest, with
//     [identity.Quarantiner];
//   - a [lease.Manager] ([Store.Claim], [Store.Renew],
//     [Store.Release]) and an [identity.Locker] built on the same leases;
//   - a task queue, [Store.Tasks], a [task.Queue], claimed with SELECT … FOR UPDATE
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
// # TTL, renewal interval and alarm margin
//
// Three durations keep a healthy process's leases alive and let a dead
// process's agents move on, and their defaults follow one rule of thirds:
//
//   - the TTL (Options.TTL, 15 s) bounds how long the agents of a process
//     that died stay stopped: another process claims them once it has
//     passed;
//   - the renewal interval (runner.Config.RenewEvery, 5 s) is a
//     third of it: a renewal on time finds two thirds of the TTL left
//     (10 s), one that comes a whole interval late still finds a third,
//     and only a holder that misses two renewals in a row loses its
//     leases;
//   - the alarm margin (Options.LateMargin, TTL/3 = 5 s): a renewal that
//     finds less than that left is late. It is counted
//     ([Stats].LeasesLate), and [Store.LateRenewals] hands it to the
//     Runner, which reports a lease_late event for the agent with the
//     time that was left: the warning comes one interval before the
//     lease would be lost, while it can still be acted on (a database
//     running out of CPU, a starved connection). A renewal that fails
//     with less than the margin left is late too.
//
// [Stats].MarginP1 is the first percentile of the time left at renewal
// over the last minute: near 10 s when healthy, and the first figure to
// fall when the database falls behind.
//
// Renewals, claims and releases run on two connections reserved for them
// (besides Options.MaxConns), so that no load of saves can keep a renewal
// waiting for a connection, and they lock the lease rows in agent id
// order, as the saves' fences do, so that a renewal and a group commit
// cannot deadlock (one rolled back by the server for a deadlock is retried
// anyway). A renewal renews 512 leases per transaction, so that a save
// fenced on a lease being renewed waits for one short transaction at most.
// An runner.Runner adopts the agents it claims (builds and loads them)
// apart from its lease rounds, so that loading thousands of agents never
// delays a renewal either.
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
// # Group commit
//
// Every cycle of every agent saves its state and asks the task queue for a
// task. One statement and one transaction per save would cost a round trip
// and a commit each, and the database's CPU would bound the agents of all
// processes together. So, as store/sqlitestore does, a Store gathers
// the saves of its agents and writes them in one statement (one
// transaction; multi-row statements over arrays), still fenced per agent
// by its own epoch in that statement: each caller learns its own result —
// a fenced agent's save fails with a [*FencedError], a corrupt stored
// state with a [*identity.CorruptError], and the rest commit. The message
// acknowledgements carried by the saves go in the same statement.
//
// How much is gathered adapts to the load. A save that finds the writer
// idle and nothing queued is written at once: with three agents, a save
// costs one round trip and no wait. Under load — the previous group commit
// carried more than one save, or saves are already queued — the writer
// waits until Options.MaxWait (5 ms) after the oldest queued save arrived,
// or until Options.MaxBatch (256) are queued, and the saves that arrive
// while one group commit is written go in the next. Why 5 ms: it is
// nothing next to a cycle (a model call of seconds) and long next to the
// server's work for a few saves (well under a millisecond), so under load
// it multiplies the saves per statement and divides the per-statement
// work (parse, plan, commit, wake-ups) for at most 5 ms per save, and a
// save that finds the writer idle pays nothing. Measured with 10,000
// agents in two processes on one 2-core machine shared with other jobs
// (about 800 saves a second each): 2 ms gathered 4 to 7 saves per group
// commit, 5 ms 7 to 10, for about a third less server CPU per cycle and
// no longer saves (their time was the machine's queue for a CPU, not the
// wait); the server ran 0.1 to 0.25 statements per cycle, against 7 to 8
// before group commit.
//
// The calls of [Queue.Next] are gathered the same way into shared probes;
// and when a probe finds no open task at all, the Next calls of the next
// 100 ms need no statement (see [Queue.Next]).
//
// MaxBatch 1 turns group commit off. [Store.Stats] shows what it did:
// saves, group commits and their sizes, round trips.
//
// # What survives a crash
//
//   - A state save that returned is in the database (a transaction; with
//     group commit, the one that held it).
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
