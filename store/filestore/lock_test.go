package filestore

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/existence-loop/sdk/identity"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Environment of the helper process that TestLockSemantics starts by
// re-running the test binary.
const envLockChildDir = "IDENTITY_TEST_LOCK_CHILD_DIR"

func TestLockSemantics(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir)
	path := filepath.Join(dir, "scout.lock")

	unlock, err := s.Lock("scout")
	require.NoError(t, err)

	if runtime.GOOS != "windows" {
		b, err := os.ReadFile(path)
		require.NoError(t, err)
		assert.Equal(t, fmt.Sprintf("%d\n", os.Getpid()), string(b), "the lock file holds the pid")
		st, err := os.Stat(path)
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o600), st.Mode().Perm())
	}

	// A second Lock in the same process fails, through this store or
	// another one on the same directory.
	other := openStore(t, dir)
	for _, st := range []*Store{s, other} {
		u, err := st.Lock("scout")
		require.Nil(t, u)
		require.ErrorIs(t, err, identity.ErrLocked)
		var le *identity.LockedError
		require.ErrorAs(t, err, &le)
		assert.Equal(t, &identity.LockedError{AgentID: "scout", Path: path, PID: os.Getpid()}, le)
		assert.Equal(t, fmt.Sprintf(`identity: agent "scout" is already running (pid %d); lock file %s`, os.Getpid(), path), err.Error())
	}

	// Other agents are independent.
	unlockB, err := s.Lock("builder")
	require.NoError(t, err)
	require.NoError(t, unlockB())

	// Locking does not stop Load or Save (the lock is advisory).
	require.NoError(t, s.Save(context.Background(), sampleState("scout")))

	require.NoError(t, unlock())
	require.NoError(t, unlock(), "a second unlock is a no-op")
	if runtime.GOOS != "windows" {
		b, err := os.ReadFile(path)
		require.NoError(t, err)
		assert.Empty(t, string(b), "unlock clears the pid")
	}

	unlock2, err := other.Lock("scout")
	require.NoError(t, err, "the lock can be taken again after unlock")
	require.NoError(t, unlock2())

	_, err = s.Lock("../scout")
	require.ErrorIs(t, err, identity.ErrInvalidID)

	ids, err := s.List(context.Background())
	require.NoError(t, err)
	assert.Equal(t, []string{"scout"}, ids, "lock files are not documents")
}

func TestLockedErrorUnknownPID(t *testing.T) {
	err := &identity.LockedError{AgentID: "vault", Path: "/s/vault.lock"}
	assert.Equal(t, `identity: agent "vault" is already running (pid unknown); lock file /s/vault.lock`, err.Error())
	assert.ErrorIs(t, err, identity.ErrLocked)
	assert.NotErrorIs(t, err, identity.ErrCorrupt)
}

func TestLockRefusesSymlinkOutside(t *testing.T) {
	dir := t.TempDir()
	outside := writeFile(t, t.TempDir(), "victim", []byte("precious"))
	if err := os.Symlink(outside, filepath.Join(dir, "scout.lock")); err != nil {
		t.Skipf("symlinks unavailable: %v", err)
	}
	s := openStore(t, dir)
	_, err := s.Lock("scout")
	require.Error(t, err)
	assert.Contains(t, err.Error(), filepath.Join(dir, "scout.lock"))
	b, err := os.ReadFile(outside)
	require.NoError(t, err)
	assert.Equal(t, "precious", string(b))

	// The refusal does not leave the id marked as held.
	require.NoError(t, os.Remove(filepath.Join(dir, "scout.lock")))
	unlock, err := s.Lock("scout")
	require.NoError(t, err)
	require.NoError(t, unlock())
}

// TestLockChild is the helper process of TestLockStaleAfterKill: it takes
// the lock, says so on stdout, and waits for stdin to close.
func TestLockChild(t *testing.T) {
	dir := os.Getenv(envLockChildDir)
	if dir == "" {
		t.Skip("helper process of TestLockStaleAfterKill")
	}
	s, err := Open(dir, Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(3)
	}
	if _, err := s.Lock("scout"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(3)
	}
	fmt.Fprintf(os.Stdout, "locked %d\n", os.Getpid())
	io.Copy(io.Discard, os.Stdin) // until the parent goes away
	os.Exit(0)
}

// TestLockStaleAfterKill proves with a real process: a running holder
// blocks with "already running (pid N)", and a holder killed with SIGKILL
// leaves a stale lock file that does not block.
func TestLockStaleAfterKill(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" || runtime.GOOS == "js" || runtime.GOOS == "wasip1" {
		t.Skip("needs SIGKILL and child processes")
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestLockChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), envLockChildDir+"="+dir)
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	defer stdin.Close()
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	killed := false
	defer func() {
		if !killed {
			cmd.Process.Kill()
			cmd.Wait()
		}
	}()

	line, err := bufio.NewReader(stdout).ReadString('\n')
	require.NoError(t, err, "child stderr: %s", stderr.String())
	require.Equal(t, fmt.Sprintf("locked %d\n", cmd.Process.Pid), line)

	s := openStore(t, dir)
	_, err = s.Lock("scout")
	var le *identity.LockedError
	require.ErrorAs(t, err, &le)
	assert.Equal(t, cmd.Process.Pid, le.PID, "the error names the holder's pid")
	assert.Contains(t, err.Error(), "already running (pid "+strconv.Itoa(cmd.Process.Pid)+")")

	require.NoError(t, cmd.Process.Kill()) // SIGKILL: no cleanup runs
	werr := cmd.Wait()
	killed = true
	var ee *exec.ExitError
	require.True(t, errors.As(werr, &ee), "child ended with %v", werr)
	assert.False(t, ee.Success())

	b, err := os.ReadFile(filepath.Join(dir, "scout.lock"))
	require.NoError(t, err)
	assert.Equal(t, fmt.Sprintf("%d\n", cmd.Process.Pid), string(b), "the stale lock file is still there")

	unlock, err := s.Lock("scout")
	require.NoError(t, err, "a stale lock file does not block")
	b, err = os.ReadFile(filepath.Join(dir, "scout.lock"))
	require.NoError(t, err)
	assert.Equal(t, fmt.Sprintf("%d\n", os.Getpid()), string(b))
	require.NoError(t, unlock())
}
