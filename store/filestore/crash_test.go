package filestore

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/suffering"
)

// crashState returns version v of the state the crash test writes. Every
// part of it is derived from v, so a document mixing two versions (or a
// torn write) cannot pass for a whole one.
func crashState(v int) *identity.AgentState {
	tag := fmt.Sprintf("v=%d ", v)
	id := identity.Identity{
		AgentID:   "scout",
		Name:      "Cedar",
		Worldview: "version " + strconv.Itoa(v),
		Narrative: strings.Repeat(tag, 800/len(tag)),
		CreatedAt: t0,
	}
	for i := range v%12 + 1 {
		id.Questions = append(id.Questions, fmt.Sprintf("%sq%d", tag, i))
	}
	for i := range v%20 + 1 {
		id.Opinions = append(id.Opinions, identity.Opinion{Text: fmt.Sprintf("%sop%d", tag, i), Domain: "d", Formed: t0.Add(time.Duration(v) * time.Second)})
	}
	return &identity.AgentState{
		Identity: id,
		Suffering: suffering.State{
			Active: []suffering.Stressor{{
				Type: suffering.RepeatedFailure, Description: tag, Severity: float64(v%100) / 100, Peak: float64(v%100) / 100,
				RatePerDay: 0.04, Condition: tag, Onset: t0,
			}},
			Resolved:      []suffering.Stressor{},
			LastEscalated: t0.Add(time.Duration(v) * time.Second),
			CrisisCycles:  v % 3,
		},
		UpdatedAt: t0,
	}
}

// crashVersion returns the version of a state written by crashState.
func crashVersion(s *identity.AgentState) (int, error) {
	n, ok := strings.CutPrefix(s.Identity.Worldview, "version ")
	if !ok {
		return 0, fmt.Errorf("not a crash-test state: worldview %q", s.Identity.Worldview)
	}
	return strconv.Atoi(n)
}

// TestCrashChild is the helper process of TestCrashAtomicity: it loads the
// state (if any), then saves the next versions in a loop and prints
// "saved N" after each Save returns, until it is killed.
func TestCrashChild(t *testing.T) {
	dir := os.Getenv(envCrashChildDir)
	if dir == "" {
		t.Skip("helper process of TestCrashAtomicity")
	}
	die := func(err error) {
		fmt.Fprintln(os.Stderr, "crash child:", err)
		os.Exit(3)
	}
	// Two journal records per document: kills land in appends and in
	// compactions alike.
	s, err := Open(dir, Options{Now: fixedNow, JournalRecords: 2})
	if err != nil {
		die(err)
	}
	ctx := context.Background()
	next := 1
	switch st, err := s.Load(ctx, "scout"); {
	case err == nil:
		v, err := crashVersion(st)
		if err != nil {
			die(err)
		}
		next = v + 1
	case !errors.Is(err, identity.ErrNotFound):
		die(err)
	}
	for v := next; v < next+100_000; v++ { // bounded, in case the parent is gone
		if err := s.Save(ctx, crashState(v)); err != nil {
			die(err)
		}
		if _, err := fmt.Fprintf(os.Stdout, "saved %d\n", v); err != nil {
			die(err)
		}
	}
	os.Exit(0)
}

// TestCrashAtomicity proves that a save is atomic with real processes: a
// child saves versions 1, 2, 3, ... in a loop and is killed with SIGKILL
// after a random number of saves, at least 200 times (20 with -short).
// After each kill the state loads, and equals a version that was fully
// written: the last one the child reported, or the one it was writing.
func TestCrashAtomicity(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" || runtime.GOOS == "js" || runtime.GOOS == "wasip1" {
		t.Skip("needs SIGKILL and child processes")
	}
	kills := 200
	if testing.Short() {
		kills = 20
	}
	dir := t.TempDir()
	store := openStore(t, dir)
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(20261121, 3))
	known := 0 // the newest version known to be on disk
	for i := range kills {
		cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), envCrashChildDir+"="+dir)
		stdout, err := cmd.StdoutPipe()
		require.NoError(t, err)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		require.NoError(t, cmd.Start())

		reported := known
		sc := bufio.NewScanner(stdout)
		read := func() bool {
			if !sc.Scan() {
				return false
			}
			if n, ok := strings.CutPrefix(sc.Text(), "saved "); ok {
				v, err := strconv.Atoi(n)
				require.NoError(t, err)
				require.Equal(t, reported+1, v, "versions are consecutive")
				reported = v
			}
			return true
		}
		want := rng.IntN(6) // 0: kill during start-up or the first save
		for range want {
			if !read() {
				break
			}
		}
		require.NoError(t, cmd.Process.Kill())
		for read() { // lines written before the kill landed
		}
		werr := cmd.Wait()
		var ee *exec.ExitError
		require.True(t, errors.As(werr, &ee), "kill %d: child ended with %v; stderr: %s", i, werr, stderr.String())
		require.False(t, ee.Exited(), "kill %d: child exited on its own (%v); stderr: %s", i, werr, stderr.String())

		st, err := store.Load(ctx, "scout")
		if reported == 0 && errors.Is(err, identity.ErrNotFound) {
			continue // killed before the first save completed
		}
		require.NoError(t, err, "kill %d: the state must load after a crash", i)
		v, err := crashVersion(st)
		require.NoError(t, err)
		require.Contains(t, []int{reported, reported + 1}, v,
			"kill %d: loaded version %d; the child reported %d", i, v, reported)
		require.Equal(t, stateJSON(t, crashState(v), true), stateJSON(t, st, true), "kill %d: version %d is not whole", i, v)
		known = v
	}
	assert.Greater(t, known, 0, "some versions were written")
	ids, err := store.List(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{"scout"}, ids, "temp files left by the kills are not listed")
	t.Logf("%d kills, %d versions written", kills, known)
}
