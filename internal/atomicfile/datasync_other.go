//go:build !linux

package atomicfile

import "os"

// Datasync is fsync where fdatasync is not available; see the Linux
// version for what it makes durable.
func Datasync(f *os.File) error { return f.Sync() }
