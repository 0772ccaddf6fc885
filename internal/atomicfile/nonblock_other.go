//go:build !unix

package atomicfile

// oNonblock is 0 where opening a special file does not block on a peer.
const oNonblock = 0
