// Package identity holds an agent's persistent self, its caps, and the
// contract of the stores that keep it: the [Store] interface, an in-memory
// [MemoryStore], and the errors every store returns. The durable stores
// live in subpackages.
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
// Agent ids name files and rows, so [ValidateID] accepts only 1–64
// characters of a-z, 0-9, "_" and "-", not starting with "_" or "-";
// anything else is refused with [ErrInvalidID].
//
// # Limits
//
// A [Limits] value holds every cap; its zero value means the defaults of
// [DefaultLimits]. Lengths are characters, that is Unicode code points
// (spec §3): a cut never splits a character. The stored caps are:
//
//   - worldview: 600 characters, overwritten, never appended (spec §3);
//   - opinions: the newest 20, each at most 200 characters with a domain
//     of at most 60 (spec §3);
//   - open questions: the newest 12, each at most 200 characters, no
//     duplicates (spec §3);
//   - narrative: the last 800 characters are kept (spec §5);
//   - discoveries: the newest 20, of 300 characters each (spec §5:
//     "capped");
//   - goal history: the newest 100 goals; outcome summaries 400
//     characters (spec §2 row 13).
//
// Limits also holds the per-reply caps on what one model reply may write
// (spec §3: 3 questions, 2 opinions, a worldview update of more than 20
// characters) and what the prompt shows of the state (the first 400
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
// the crisis counter), unread messages from peers and from the host, when a
// person was last present, and the time of the last save. With it the loop
// resumes exactly where it was.
//
// A [Store] loads, saves and lists states by agent id; every store is safe
// for concurrent use, Load returns a copy the caller owns, and Save stores
// a copy. [MemoryStore] keeps states in memory, for tests and for agents
// that need no persistence. Stores that can do more implement [Locker]
// (one process per agent: a second holder gets a [*LockedError], matching
// [ErrLocked]) and [Quarantiner] (move an unusable document aside). The
// durable stores are:
//
//   - store/filestore: one JSON document per agent in a directory,
//     with a journal, atomic and durable saves, and advisory file locks;
//   - store/sqlitestore: one SQLite database file holding every agent,
//     the task queue and unread messages, with group commit;
//   - store/pgstore: PostgreSQL, shared by many processes on many
//     machines through leases with fencing tokens (package lease).
//
// store/storetest is the conformance suite every store passes, and
// hollow imports the Python original's memory into a store.
//
// # Errors
//
// The errors are shared by every store, so that callers test them once,
// with errors.Is and errors.As: [ErrNotFound] (no state stored),
// [ErrInvalidID], [ErrLocked] ([*LockedError]), [ErrTooLarge] (above a
// store's size limit, [DefaultMaxBytes] by default), [ErrFutureVersion] (a
// document of a newer [SchemaVersion]) and [ErrCorrupt]. [*CorruptError]
// is the one corrupt-document error of the SDK: an agent state in any
// store, the task queue file (store/taskqueue) and the requests file
// (existence/requests) all report it, naming the document and saying why.
// A corrupt document is never overwritten or replaced silently: it stays
// for a person to inspect, until it is quarantined.
package identity
