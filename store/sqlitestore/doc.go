// Package sqlitestore is an [identity.Store] that keeps every agent's
// state, the task queue and the agents' unread peer and host messages in
// one SQLite database file, through modernc.org/sqlite (pure Go, no cgo)
// and database/sql. Open a store with [Open] and close it with
// [Store.Close]; several processes may open the same file.
//
// Saves are durable when they return and share transactions (group
// commit: saves that arrive together share one fsync); a save writes only
// the rows that changed. Loads read one consistent snapshot of an agent's
// rows, with statements prepared once per [Store] on its read connections.
// [Store.Stats] counts saves, commits and rows written; [Store.DB] gives
// read-only SQL access to the same file.
//
// Besides [identity.Store], a [*Store] is:
//
//   - an [identity.Locker]: [Store.Lock] takes a lease row naming its
//     holder, renewed while the store is open ([Options].LeaseTTL), so
//     that one process at a time runs an agent;
//   - an [identity.Quarantiner]: [Store.Quarantine] moves an agent's
//     rows, raw, into the quarantine table;
//   - a task queue, [Store.Tasks], a [task.Queue] with
//     the caps of [Options].TaskLimits;
//   - a keeper of small named documents, [Store.Document], such as the
//     requests to the human (an existence/requests.Backend);
//   - a memory.Store: the agents' long-term memories, one row each in the
//     memories table (unique by agent and text; times in microseconds,
//     vectors as little-endian float32 BLOBs, NULL while pending), every
//     write one durable transaction.
//
// The database is versioned ([SchemaVersion]): older databases are
// migrated by [Open], and a newer one is refused with
// [identity.ErrFutureVersion]. A stored state that cannot be decoded is
// named in a [*identity.CorruptError] and never replaced silently.
package sqlitestore
