// Package workspace gives agents sandboxed file tools over one directory,
// per agent or shared: read_file, write_file, append_file, list_files and
// delete_file.
//
// [Open] opens a [Workspace] on a directory. Every operation goes through an
// [os.Root], so no path can leave the directory, even through a symlink.
// Paths are slash-separated and relative ("notes/report.md"); empty paths,
// NUL bytes, backslashes, absolute paths (including "C:\x" and
// "//host/share") and ".." components are refused before the file system is
// touched, with an error wrapping [ErrPath] that says why ([Clean] applies
// these rules). Symlinks that stay inside are followed for reads; writes
// never follow a symlink.
//
// Writes are atomic and durable (temp file, fsync, [os.Root.Rename], fsync
// of the directory), and appends rewrite the file the same way. [Limits]
// caps reads ([ErrTooLarge]), writes ([ErrTooLarge]), and the total size
// and number of files of the workspace ([ErrQuota]), counted once when the
// workspace is opened and then kept up to date.
//
// Beyond what os.Root guarantees, the workspace refuses named pipes,
// sockets and devices without opening them ([ErrNotRegular]; a FIFO would
// otherwise block the reader), and regular files with more than one hard
// link ([ErrHardLink]; a hard link can share a file outside the directory).
// No lock is held across a blocking open or read, so one slow file never
// holds up the other agents or [Workspace.Close]. [Open] lists these
// guarantees in full.
//
// [Workspace.Tools] returns the five tools for a [toolloop.Executor]. They
// report to the goal's outcome: write_file and append_file report the paths
// they wrote with [toolloop.ReportArtifact] (Outcome.Artifacts, for the
// futility assessment); read_file reports each file it read with
// [toolloop.ReportDiscovery] (Outcome.Discoveries, for the "WHAT YOU'VE
// FOUND OUTSIDE:" section, spec §2 row 11), Source being the cleaned path
// and Text the path and the file's first non-blank line, for example
//
//	design/index.md: "# Index of designs"
//
// flattened to one line and cut to [DiscoveryLineChars] characters.
// Listings are not reported: they are navigation, and would crowd the few
// discoveries the prompt shows.
package workspace
