package filestore

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"

	"github.com/gofrs/flock"

	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/internal/atomicfile"
)

// heldLocks holds the absolute paths of the lock files locked by this
// process, so that a second Lock in the same process fails on every
// platform (fcntl-based locks would not conflict within one process).
var heldLocks = struct {
	sync.Mutex
	paths map[string]bool
}{paths: map[string]bool{}}

// Lock takes the advisory lock of agentID, so that one process at a time
// runs the agent ("one process per agent"). It locks
// Dir()/{agentID}.lock (created with permission 0600) with an exclusive,
// non-blocking flock and writes this process's id into it. The lock is
// released by calling unlock (once; later calls return nil) or by the
// operating system when the process ends, however it ends: a lock file left
// by a killed process does not block. The lock file itself is never
// removed, since removing it could let two processes lock different files.
//
// The lock is advisory: Load and Save do not check it. Hold it for the
// whole run of an agent.
//
// Once locked, no writer of the agent can be alive, so Lock removes the temp
// files that interrupted saves left (".{agentID}.json.tmp-*") and reports
// the removal through Options.Logger at level Info ("identity: removed
// temp files of interrupted saves", with the agent, the directory and the
// file names); a failure to remove one is logged at level Warn and does not
// fail the Lock: the temp files are garbage, and the agent can run.
//
// A lock file that is not a regular file (a FIFO, socket, device or
// directory) is refused at once with an error matching
// [atomicfile.ErrNotRegular] that names it.
//
// Errors: [identity.ErrInvalidID]; a [*identity.LockedError] (matching
// [identity.ErrLocked]) when another process, or an earlier Lock in this
// process, holds the lock; an I/O error, for example when the lock file is a
// symlink that leaves the directory.
func (f *Store) Lock(agentID string) (unlock func() error, err error) {
	if err := identity.ValidateID(agentID); err != nil {
		return nil, err
	}
	name := agentID + ".lock"
	path := filepath.Join(f.dir, name)
	key, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("identity: lock %s: %w", path, err)
	}
	heldLocks.Lock()
	if heldLocks.paths[key] {
		heldLocks.Unlock()
		return nil, &identity.LockedError{AgentID: agentID, Path: path, PID: os.Getpid()}
	}
	heldLocks.paths[key] = true
	heldLocks.Unlock()
	release := func() {
		heldLocks.Lock()
		delete(heldLocks.paths, key)
		heldLocks.Unlock()
	}

	// Open (or create) the lock file inside the directory first: os.Root
	// refuses a symlink that leaves it, which flock's plain open would
	// follow.
	root, err := os.OpenRoot(f.dir)
	if err != nil {
		release()
		return nil, fmt.Errorf("identity: lock %s: %w", path, err)
	}
	root.Close()
	// Only a regular file is locked: a FIFO, socket, device or directory
	// in its place is refused at once (O_NONBLOCK and fstat), never waited
	// on: a hostile file in the directory cannot hang the store.
	pidFile, _, err := atomicfile.OpenRegular(f.dir, name, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		release()
		if errors.Is(err, atomicfile.ErrNotRegular) {
			return nil, fmt.Errorf("identity: lock file of agent %q: %w; remove it to run the agent", agentID, err)
		}
		return nil, fmt.Errorf("identity: lock %s: %w", path, err)
	}
	fail := func(err error) (func() error, error) {
		pidFile.Close()
		release()
		return nil, err
	}

	fl := flock.New(path, flock.SetPermissions(0o600))
	ok, err := fl.TryLock()
	if err != nil {
		return fail(fmt.Errorf("identity: lock %s: %w", path, err))
	}
	if !ok {
		return fail(&identity.LockedError{AgentID: agentID, Path: path, PID: readPID(pidFile)})
	}
	unlockAll := func() error {
		var errs []error
		if runtime.GOOS != "windows" {
			errs = append(errs, pidFile.Truncate(0))
		}
		errs = append(errs, fl.Unlock(), pidFile.Close())
		release()
		return errors.Join(errs...)
	}
	// The file flock locked must be the one opened through the root.
	st1, err1 := pidFile.Stat()
	st2, err2 := os.Stat(path)
	if err := errors.Join(err1, err2); err != nil || !os.SameFile(st1, st2) {
		if err == nil {
			err = errors.New("the lock file was replaced while locking")
		}
		return nil, fmt.Errorf("identity: lock %s: %w", path, errors.Join(err, unlockAll()))
	}
	// Windows locks the file's first byte against other handles too, so
	// there the pid is not recorded and a LockedError has PID 0.
	if runtime.GOOS != "windows" {
		if err := writePID(pidFile, os.Getpid()); err != nil {
			return nil, fmt.Errorf("identity: lock %s: writing pid: %w", path, errors.Join(err, unlockAll()))
		}
	}
	// No writer of this agent can be alive now: remove the temp files of
	// interrupted saves, serialised with this store's own saves.
	e := f.entry(agentID)
	e.mu.Lock()
	removed, err := atomicfile.RemoveTemps(f.dir, agentID+".json")
	e.mu.Unlock()
	if len(removed) > 0 {
		f.log.Info("identity: removed temp files of interrupted saves", "agent", agentID, "dir", f.dir, "files", removed)
	}
	if err != nil {
		f.log.Warn("identity: removing temp files of interrupted saves", "agent", agentID, "dir", f.dir, "err", err)
	}
	return sync.OnceValue(unlockAll), nil
}

// writePID replaces the content of f with "{pid}\n".
func writePID(f *os.File, pid int) error {
	b := []byte(strconv.Itoa(pid) + "\n")
	if _, err := f.WriteAt(b, 0); err != nil {
		return err
	}
	return f.Truncate(int64(len(b)))
}

// readPID returns the pid recorded in a lock file, or 0.
func readPID(f *os.File) int {
	b, err := io.ReadAll(io.NewSectionReader(f, 0, 32))
	if err != nil {
		return 0
	}
	line, _, _ := bytes.Cut(b, []byte("\n"))
	pid, err := strconv.Atoi(string(bytes.TrimSpace(line)))
	if err != nil || pid <= 0 {
		return 0
	}
	return pid
}
