// Package atomicfile reads and writes the SDK's small state documents
// safely; the file store, the task queue, the requests file, the workspace,
// the hollow importer and golden files all go through it.
//
//   - [WriteFile] replaces a file atomically and durably (temp file
//     ".{name}.tmp-*" in the same directory, fsync, atomic rename, fsync of
//     the directory with [SyncDir]): after a crash at any instant the file
//     holds its previous content or the new one, never a mix.
//     [RemoveTemps] clears the temp files of interrupted writes.
//   - [ReadFile] reads a file confined to one directory with [os.Root]
//     (symlinks that leave it are refused) and capped in size
//     ([ErrTooLarge]).
//   - [OpenRegular] opens only regular files: a FIFO, socket, device or
//     directory in their place is refused at once ([ErrNotRegular], named
//     by [DescribeMode]), never waited on.
//   - [Datasync] is fdatasync(2), for appends such as the file store's
//     journal.
package atomicfile
