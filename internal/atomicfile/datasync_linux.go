//go:build linux

package atomicfile

import (
	"os"
	"syscall"
)

// Datasync flushes f's data and the metadata needed to read it back (its
// size): fdatasync(2), cheaper than fsync(2) on Linux, retried on EINTR.
// It does not make a new directory entry durable: after a create or a
// rename, sync the directory too ([SyncDir]). Errors are *os.PathError.
func Datasync(f *os.File) error {
	for {
		err := syscall.Fdatasync(int(f.Fd()))
		if err != syscall.EINTR {
			if err != nil {
				return &os.PathError{Op: "fdatasync", Path: f.Name(), Err: err}
			}
			return nil
		}
	}
}
