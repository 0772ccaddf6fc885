// Package docfile keeps one small, versioned JSON document in a state
// directory, the way store/taskqueue (tasks.json) and
// existence/requests (requests.json) do, so that both share one
// implementation of the file handling:
//
//   - [Format] is the document's file format: indented JSON with a
//     "version" field and one list of items with unique ids. Decoding is
//     strict (unknown fields, trailing data, a missing, negative or newer
//     schema version, an invalid item or a duplicate id are refused), and
//     every refusal is built by the caller's Corrupt function (both
//     callers return an identity.CorruptError, the SDK's one
//     corrupt-document error, with their own Kind).
//   - [File] is the document on disk: read through [atomicfile.ReadFile]
//     (confined to the directory, size-limited, regular files only),
//     written through [atomicfile.WriteFile] (temp file, fsync, atomic
//     rename, fsync of the directory), guarded by a cross-process advisory
//     lock file (github.com/gofrs/flock) taken with capped, jittered
//     exponential backoff that honours ctx.
//   - [Memory] is the same document kept in memory, for queues without a
//     file; both satisfy [Store].
//   - [Update] runs a change under the in-process lock and the store's
//     lock; [PrepareDir] and [Quarantine] are the directory set-up and the
//     move-aside policy for a corrupt file (the same for every
//     document: moved aside only when the caller asks, never
//     overwritten).
//
// Size policies (what to drop, when to refuse a write) and error sentinels
// stay in the packages that use docfile: they differ between them.
package docfile
