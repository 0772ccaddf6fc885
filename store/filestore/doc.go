// Package filestore is the durable [identity.Store] of a state directory:
// one JSON document per agent, "{agent_id}.json", with permission 0600.
// [Open] opens (or creates, with permission 0700) the directory and returns
// a [*Store], configured by [Options]:
//
//	store, err := filestore.Open("./state", filestore.Options{})
//
// The store keeps these promises:
//
//   - Saves are atomic and durable when Save returns. Most append the
//     whole document, as one checksummed line, to the agent's journal
//     ("{agent_id}.journal") and fdatasync it; every
//     [Options].JournalRecords saves ([DefaultJournalRecords], 8), a save
//     rewrites "{agent_id}.json" instead (temp file in the same directory,
//     fsync, atomic rename, fsync of the directory) and truncates the
//     journal. After a crash at any instant a load returns the previous or
//     the new version, never a mix. So read a state with Load, not from
//     "{agent_id}.json", which may be a few saves behind; [IndentDocument]
//     makes a document readable.
//   - Documents are versioned ({"schema_version": 1, "state": ...}, see
//     [identity.SchemaVersion]). Older versions are migrated on load; a
//     document from a newer version is refused with
//     [identity.ErrFutureVersion].
//   - A document that cannot be used is never overwritten or replaced
//     silently. Load returns a [*identity.CorruptError] (matching
//     [identity.ErrCorrupt]) naming the file and the reason (truncated
//     JSON, a wrong type with its field, a NaN or out-of-range severity,
//     another agent's id, a directory or a symlink where the file should
//     be). Save then refuses to replace the document until
//     [Store.Quarantine] has moved it (and its journal) aside to
//     "{agent_id}.json.corrupt-{UTC time}". The torn end of a journal, left
//     by a save interrupted before it returned, is ignored and logged.
//     Nothing is ever deleted.
//   - One process per agent: [Store.Lock] (the store is an
//     [identity.Locker]) takes an advisory lock on "{agent_id}.lock" and
//     records the holder's pid; a second holder gets a
//     [*identity.LockedError] (matching [identity.ErrLocked]) that reads
//     "already running (pid N)". A lock left by a killed process does not
//     block, since the operating system releases it.
//   - Limits against hostile state directories: documents larger than
//     [Options].MaxBytes ([identity.DefaultMaxBytes], 4 MiB) are refused
//     with [identity.ErrTooLarge]; symlinks that leave the directory are
//     refused; a FIFO, socket, device or directory in place of a document,
//     journal or lock file is refused at once, never waited on.
//
// The store returns what is stored: it validates states but does not apply
// [identity.Limits]; the agent trims with [identity.Identity.Enforce] after
// loading. A Store is safe for concurrent use: saves of one agent are
// serialised within the process, and [Store.Lock] keeps other processes
// away.
//
// # Memories
//
// The store is also a memory.Store: an agent's long-term memories are a
// checksummed log of writes, "memories/{agent_id}.jsonl" (see
// [Store.MemoryPath]): appended and fdatasynced per write, compacted when
// it holds twice as many lines as memories, a torn last line ignored, a
// bad line before it named in a [*identity.CorruptError]. The store keeps
// an index of the memories without their vectors; the memory.Memory
// above it holds the vectors it recalls over.
package filestore
