// Package identity holds an agent's persistent self and stores it durably.
//
// # Identity
//
// An [Identity] is what an existence-loop agent knows about itself (spec
// §5): its id and name, traits, domains, a worldview, opinions (each with a
// domain and the date it was formed), open questions, a rolling narrative,
// discoveries, and its goal history ([Goal], with the statuses [Active],
// [Done], [Failed] and [Abandoned]). Identity fields are finite, compressed
// representations, not logs: every mutating method ([Identity.SetWorldview],
// [Identity.AddOpinion], [Identity.AddQuestion], [Identity.AddDiscovery],
// [Identity.AppendNarrative], [Identity.StartGoal], [Identity.EndGoal])
// enforces its cap as it writes.
//
// Agent ids name files, so [ValidateID] accepts only 1–64 characters of
// a-z, 0-9, "_" and "-"; anything else is refused with [ErrInvalidID].
//
// # Limits
//
// A [Limits] value holds every cap; its zero value means the defaults of
// [DefaultLimits]. Lengths are characters, that is Unicode code points
// (spec §3): a cut never splits a character. The stored caps are:
//
//   - worldview: 600 characters, overwritten, never appended (spec §3);
//   - opinions: the newest 20 (spec §3);
//   - open questions: the newest 12 (spec §3);
//   - narrative: the last 800 characters are kept (spec §5);
//   - discoveries: the newest 20, of 300 characters each (spec §5:
//     "capped");
//   - goal history: the newest 100 goals; outcome summaries 400
//     characters (spec §2).
//
// Limits also holds what the prompt shows of the state (the first 400
// characters of the narrative, the 6 newest opinions, ...; spec §2).
//
// State written by older versions, by hand or by other tools may exceed
// the caps. [Identity.Enforce] trims it and reports each cut; it never
// refuses and never fails. Stores return what is stored; the agent calls
// Enforce after loading and reports the cuts.
//
// # State and stores
//
// An [AgentState] is everything persisted for one agent: its identity, its
// suffering ([suffering.State], spec §4, including the escalation clock and
// the crisis counter), unread messages from peers and from the host, and the
// time of the last save. With it the loop resumes exactly where it was.
//
// A [Store] loads, saves and lists states by agent id. [MemoryStore] keeps
// them in memory, for tests and agents that need no persistence.
// [FileStore], opened with [OpenFileStore], keeps one JSON document per
// agent in a directory:
//
//   - Saves are atomic and durable when Save returns. Most append the
//     whole document, as one checksummed line, to the agent's journal
//     ("{id}.journal") and fdatasync it; every FileOptions.JournalRecords
//     saves (8 by default), a save rewrites "{id}.json" instead (temp file
//     in the same directory, fsync, atomic rename, fsync of the directory)
//     and truncates the journal. After a crash at any instant a load
//     returns the previous or the new version, never a mix. So read a
//     state with Load, not from "{id}.json", which may be a few saves
//     behind.
//   - Documents are versioned ({"schema_version": 1, "state": ...}, see
//     [SchemaVersion]). Older versions are migrated on load; a document
//     from a newer version is refused with [ErrFutureVersion].
//   - A document that cannot be used is never overwritten or replaced
//     silently. Load returns a [*CorruptError] ([ErrCorrupt]) naming the
//     file and the reason (truncated JSON, a wrong type with its field, a
//     NaN or out-of-range severity, another agent's id, a directory or a
//     symlink where the file should be). Save then refuses to replace the
//     document until [FileStore.Quarantine] has moved it (and its journal)
//     aside to "{id}.json.corrupt-{UTC time}". The torn end of a journal,
//     left by a save interrupted before it returned, is ignored and logged.
//     Nothing is ever deleted.
//   - One process per agent: [FileStore.Lock] takes an advisory file lock
//     and records the holder's pid; a second holder gets a [*LockedError]
//     ([ErrLocked]) that reads "already running (pid N)". A lock left by a
//     killed process does not block, since the operating system releases it.
//   - Limits against hostile state directories: documents larger than
//     FileOptions.MaxBytes (4 MiB by default) are refused with
//     [ErrTooLarge]; symlinks that leave the directory are refused; files
//     are created with permission 0600 and the directory with 0700.
//
// Every store is safe for concurrent use. Load returns a copy that the
// caller owns, and Save stores a copy.
package identity
