//go:build linux

package atomicfile

import (
	"os"
	"syscall"
)

// datasync flushes f's data and the metadata needed to read it back (its
// size): fdatasync(2), cheaper than fsync(2) on Linux. The rename that
// follows is made durable by the directory's fsync.
func datasync(f *os.File) error {
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
