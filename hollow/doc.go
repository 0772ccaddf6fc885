// Package hollow imports the memory of hollow-agentOS, the original Python
// system, into the SDK's own agent state, so that its agents can be brought
// along.
//
// A hollow-agentOS memory directory holds, per agent id:
//
//	identity/{agent_id}/profile.json    name, traits, domains, worldview, opinions_list, open_questions, narrative, created_at
//	identity/{agent_id}/suffering.json  active_stressors, resolved_history, last_escalated
//	goals/{agent_id}/registry.jsonl     one goal per line: goal_id, objective, status, created_at, completed_at, metrics
//	goals/{agent_id}/last_outcome.txt   optional: the last completed goal's outcome summary
//	identity/names.json                 {name: agent_id}
//	semantic/{agent_id}/                the semantic memory: metadata.jsonl, embeddings.npy, index.json
//
// [Read] converts every agent to an [identity.AgentState] that passes
// [identity.AgentState.Validate] and never writes anything; [ReadMemories]
// converts the semantic memories to memory.Record values, never writing
// either; [Import] reads both and then saves the states in an
// [identity.Store] and the memories in the same store (a memory.Store, as
// every SDK store is). They return a [Summary] (and a [MemorySummary] per
// agent) of what was imported, cut, clamped or skipped ([Summary.String]
// prints it).
//
// # Semantic memory
//
// The original's agents/semantic_memory.py keeps, per agent,
// metadata.jsonl (one record a line: memory_id, thought, timestamp,
// access_count, last_accessed), embeddings.npy (float32 (N, 768)
// nomic-embed-text vectors, not normalised) and index.json ({memory_id:
// row}). A line's vector is the row index.json names: row i is not line
// i, because a row is appended only when the embedding call succeeded
// (only 75 of the real scout sample's 2,796 lines have one, and 63 of
// those 75 rows belong to another line than their number). The
// original's own search reads row i against line i and so labels its
// results with the wrong texts; [ReadMemories] joins by memory_id. Lines
// without a vector are imported pending (the memory's backfill embeds
// them), "[DELETED]" lines (the original's forget) are skipped, and
// timestamps and access counts are kept. A text repeated on several lines
// is one memory (its access count raised per repeat). Every line is
// accounted for in the [MemorySummary]: Lines = Imported + Repeated +
// Deleted + Skipped.
//
// # Mapping
//
// Profile fields map to the [identity.Identity] fields of the same meaning;
// opinions_list entries become [identity.Opinion] values (formed
// "YYYY-MM-DD"); created_at is unix seconds. Stressors keep their
// description, severity, peak, onset, rate and observable condition
// (as [suffering.Stressor.Condition]); resolved_history entries keep
// resolved_at and resolution_note (as Resolution). last_escalated becomes
// [suffering.State.LastEscalated], so the first escalation after the import
// counts the whole downtime (spec §4). Registry goals become
// [identity.Goal] values: completed → DONE, failed → FAILED, abandoned →
// ABANDONED, active → active; created_at → Started; completed_at (else
// updated_at) → Ended; metrics.failure_reason → Outcome. The newest DONE
// goal's Outcome is goals/{agent_id}/last_outcome.txt when that file
// exists (the summary the original wrote on completion). Step counts are
// not imported as outcomes: the prompt shows what a goal produced, never a
// bare step count (spec §2 row 13).
//
// Fields with no counterpart in the SDK's state are not imported:
// vote_history, narrative_updated_at, an opinion's times_tested, and a
// goal's priority, parent_goal_id, subgoals and the rest of its metrics.
//
// Each agent's name is the one in its own profile.json; names.json, whose
// mapping may disagree (in real memory it does), only names an agent that
// has no profile.json or no name in it.
//
// The original wrote "YYYY-MM-DD HH:MM" timestamps in the container's local
// time; they are read in Options.Location (UTC by default). Unix-second
// timestamps need no location. All imported times are in UTC.
//
// # Real files break today's rules
//
// Files written by the original do not follow the rules of spec §4 and §5.
// Read copes, and reports each case in the [Summary]:
//
//   - stressor types in mixed case with spaces are normalised with
//     [suffering.Normalize]; active stressors whose types become equal are
//     merged: the most severe stays active, the others move to the resolved
//     history with a note ([AgentSummary.StressorsMerged]);
//   - beyond 5 active stressors, the 5 most severe stay active and the rest
//     move to the resolved history with a note that says why
//     ([AgentSummary.StressorsDemoted]);
//   - severities that are NaN (Python writes NaN and Infinity into JSON) or
//     outside 0–1 are clamped, with a warning;
//   - lists over their caps are cut by [identity.Identity.Enforce] with
//     Options.Limits ([AgentSummary.Trimmed]); the goal history keeps the
//     newest Limits.Goals goals;
//   - missing fields and files are filled in (missing timestamps with
//     Options.Now) or left empty, with a warning; an agent with no
//     profile.json takes its name from names.json;
//   - a registry line that is not a JSON object, or has no objective, is
//     skipped with a warning naming its line number; the import goes on;
//   - goal objectives that span several lines are put on one line;
//   - goals are sorted by start time, and only the newest may stay active:
//     older active goals become ABANDONED with an outcome saying so.
//
// A JSON document that exists but is not a JSON object at all (truncated,
// empty, a list) is an error, a [*FileError] wrapping [ErrMalformed] that
// names the file: the importer never imports an agent without part of
// itself. Reads are confined to the directory with [os.Root] (a symlink
// that leaves it is an error) and capped at [MaxFileSize] bytes per file
// and [MaxLineSize] bytes per registry line.
//
// Nothing here is tuned to one sample: any hollow-agentOS directory can be
// imported, including one with several agents.
package hollow
