// Package sqlitestore is an [identity.Store] that keeps every agent's
// state, the task queue and the agents' unread peer and host messages in
// one SQLite database file, through modernc.org/sqlite (pure
// Go) and database/sql.
//
// Saves are durable when they return and share transactions (group
// commit); a save writes only the rows that changed. Loads read one
// consistent snapshot of an agent's rows, with statements prepared once
// per [Store] on its read connections. [Store.DB] gives read-only SQL
// access to the same file.
//
// Open a store with [Open] and close it with [Store.Close].
package sqlitestore
