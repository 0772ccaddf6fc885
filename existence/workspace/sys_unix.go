//go:build unix

package workspace

import (
	"io/fs"
	"syscall"
)

// openFlags are added to every open of an existing file: O_NONBLOCK, so
// that a FIFO swapped in after the type check cannot block the open, and
// O_NOCTTY, so that a terminal device never becomes the controlling one.
const openFlags = syscall.O_NONBLOCK | syscall.O_NOCTTY

// links returns a file's hard link count (1 when unknown).
func links(st fs.FileInfo) uint64 {
	if s, ok := st.Sys().(*syscall.Stat_t); ok {
		return uint64(s.Nlink)
	}
	return 1
}
