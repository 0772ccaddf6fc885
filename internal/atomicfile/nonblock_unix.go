//go:build unix

package atomicfile

import "syscall"

// oNonblock makes opening a FIFO or a device return at once.
const oNonblock = syscall.O_NONBLOCK
