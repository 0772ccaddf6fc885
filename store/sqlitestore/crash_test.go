//go:build unix

package sqlitestore_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/store/sqlitestore"
	"github.com/existence-loop/sdk/store/storetest"
	"github.com/existence-loop/sdk/suffering"
)

const envCrashDB = "SQLITESTORE_CRASH_DB"

// crashAgents are the agents the crash child saves concurrently, so that
// their saves share group commits.
var crashAgents = []string{"a0", "a1", "a2", "a3", "a4", "a5"}

// crashState returns version v of agent id's state. Every part is derived
// from v; the goal history slides (the oldest fall off, the last changes),
// so saves write only some rows and a torn save cannot pass for whole.
func crashState(id string, v int) *identity.AgentState {
	tag := fmt.Sprintf("%s v=%d", id, v)
	st := &identity.AgentState{Identity: identity.Identity{AgentID: id, Name: "N", Worldview: "version " + strconv.Itoa(v), Narrative: tag, CreatedAt: t0}}
	for g := max(0, v-15); g <= v; g++ {
		goal := identity.Goal{ID: fmt.Sprintf("g%d", g), Objective: fmt.Sprintf("goal %d", g), Status: identity.Done, Started: t0, Ended: t0}
		if g == v {
			goal.Status, goal.Ended, goal.Objective = identity.Active, time.Time{}, tag
		}
		st.Identity.Goals = append(st.Identity.Goals, goal)
	}
	for d := range v%5 + 1 {
		st.Identity.Discoveries = append(st.Identity.Discoveries, identity.Discovery{Text: fmt.Sprintf("%s d%d", tag, d), Source: fmt.Sprint(d), At: t0})
	}
	for m := range v % 3 {
		st.Inbox = append(st.Inbox, identity.AgentMessage{From: "peer", Text: fmt.Sprintf("%s m%d", tag, m), At: t0})
	}
	st.Suffering = suffering.State{Active: []suffering.Stressor{{Type: suffering.Futility, Description: tag, Severity: float64(v%100) / 100,
		Peak: float64(v%100) / 100, RatePerDay: 0.03, Condition: tag, Onset: t0}}, LastEscalated: t0, CrisisCycles: v % 3}
	return st
}

func crashVersion(st *identity.AgentState) (int, error) {
	n, ok := strings.CutPrefix(st.Identity.Worldview, "version ")
	if !ok {
		return 0, fmt.Errorf("worldview %q", st.Identity.Worldview)
	}
	return strconv.Atoi(n)
}

// TestCrashChild is the helper process of TestCrashGroupCommit: one
// goroutine per agent saves its next versions in a loop, printing
// "saved ID N" once each Save has returned, until the process is killed.
func TestCrashChild(t *testing.T) {
	path := os.Getenv(envCrashDB)
	if path == "" {
		t.Skip("helper process of TestCrashGroupCommit")
	}
	die := func(err error) {
		fmt.Fprintln(os.Stderr, "crash child:", err)
		os.Exit(3)
	}
	ctx := context.Background()
	s, err := sqlitestore.Open(ctx, path, sqlitestore.Options{Now: func() time.Time { return t0 }})
	if err != nil {
		die(err)
	}
	var out sync.Mutex
	var wg sync.WaitGroup
	for _, id := range crashAgents {
		wg.Add(1)
		go func() {
			defer wg.Done()
			next := 1
			switch st, err := s.Load(ctx, id); {
			case err == nil:
				v, err := crashVersion(st)
				if err != nil {
					die(err)
				}
				next = v + 1
			case !errors.Is(err, identity.ErrNotFound):
				die(err)
			}
			for v := next; v < next+100_000; v++ {
				if err := s.Save(ctx, crashState(id, v)); err != nil {
					die(err)
				}
				out.Lock()
				_, err := fmt.Fprintf(os.Stdout, "saved %s %d\n", id, v)
				out.Unlock()
				if err != nil {
					die(err)
				}
			}
		}()
	}
	wg.Wait()
	os.Exit(0)
}

// TestCrashGroupCommit kills a child saving several agents under group
// commit with SIGKILL at random, at least 200 times (20 with -short).
// After each kill the database opens, and every agent's state is whole and
// at least the last version whose Save returned (or the one in flight).
func TestCrashGroupCommit(t *testing.T) {
	t.Parallel()
	kills := 200
	if testing.Short() {
		kills = 20
	}
	// A SIGKILL leaves the page cache intact, so fsync plays no part in
	// what this test checks (atomic, complete commits and recovery); the
	// database lives on tmpfs when there is one, to keep the test fast.
	dir := t.TempDir()
	if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() {
		if d, err := os.MkdirTemp("/dev/shm", "sqlitestore-crash-"); err == nil {
			dir = d
			t.Cleanup(func() { os.RemoveAll(d) })
		}
	}
	path := filepath.Join(dir, "state.db")
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(20261123, 10))
	known := map[string]int{}
	total := 0
	for i := range kills {
		cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), envCrashDB+"="+path)
		stdout, err := cmd.StdoutPipe()
		require.NoError(t, err)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		require.NoError(t, cmd.Start())
		reported := map[string]int{}
		for id, v := range known {
			reported[id] = v
		}
		sc := bufio.NewScanner(stdout)
		read := func() bool {
			if !sc.Scan() {
				return false
			}
			f := strings.Fields(sc.Text())
			if len(f) == 3 && f[0] == "saved" {
				v, err := strconv.Atoi(f[2])
				require.NoError(t, err)
				require.Equal(t, reported[f[1]]+1, v, "versions of %s are consecutive", f[1])
				reported[f[1]] = v
			}
			return true
		}
		for range rng.IntN(12) { // 0: kill during start-up
			if !read() {
				break
			}
		}
		require.NoError(t, cmd.Process.Kill())
		for read() {
		}
		werr := cmd.Wait()
		var ee *exec.ExitError
		require.True(t, errors.As(werr, &ee), "kill %d: child ended with %v; stderr: %s", i, werr, stderr.String())
		require.False(t, ee.Exited(), "kill %d: child exited on its own; stderr: %s", i, stderr.String())

		s, err := sqlitestore.Open(ctx, path, sqlitestore.Options{})
		require.NoError(t, err, "kill %d: the database must open after a crash", i)
		for _, id := range crashAgents {
			st, err := s.Load(ctx, id)
			if reported[id] == 0 && errors.Is(err, identity.ErrNotFound) {
				continue
			}
			require.NoError(t, err, "kill %d: %s must load", i, id)
			v, err := crashVersion(st)
			require.NoError(t, err)
			require.Contains(t, []int{reported[id], reported[id] + 1}, v, "kill %d: %s loaded version %d, the child reported %d", i, id, v, reported[id])
			require.Equal(t, storetest.StateJSON(t, crashState(id, v)), storetest.StateJSON(t, st), "kill %d: %s version %d is not whole", i, id, v)
			total += v - known[id]
			known[id] = v
		}
		require.NoError(t, s.Close())
	}
	assert.Greater(t, total, kills, "saves were written")
	t.Logf("%d kills, %d saves survived: %v", kills, total, known)
}
