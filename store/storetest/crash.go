package storetest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/suffering"
)

// envCrashDir tells the process [Crash] starts that it is the child, and
// where the store lives.
const envCrashDir = "EXISTENCE_STORETEST_CRASH_DIR"

// CrashConfig configures [Crash].
type CrashConfig struct {
	// Open opens the store under test on the data in dir, in the child
	// (which saves) and in the parent after each kill (which loads). The
	// store is closed after use when it is an [io.Closer]. Required.
	Open func(ctx context.Context, dir string) (identity.Store, error)
	// Agents are the agents the child saves, each on a goroutine of its
	// own, so that their saves meet (and share a group commit where the
	// store has one). Default: one agent, "scout".
	Agents []string
	// Kills is how many times the child is killed; default 200, and 20
	// under -short.
	Kills int
	// MaxSaves bounds the saves the parent waits for before each kill: a
	// random number below it, 0 killing the child during start-up or its
	// first save. Default 12.
	MaxSaves int
	// Seed seeds the random numbers of saves before each kill; 0 means 1.
	Seed uint64
	// Dir is where the data lives, a directory that exists. "" means a
	// new directory on tmpfs (/dev/shm) when there is one, removed at the
	// end (a SIGKILL leaves the page cache intact, so fsync plays no part
	// in what is checked, and the test runs faster), else t.TempDir().
	// Set it for a store that needs a real file system (O_DIRECT), or
	// where /dev/shm is small (Docker's default is 64 MB).
	Dir string
	// Timeout bounds each child's run, from its start to its kill: a
	// child that has not made the saves waited for by then (stuck opening
	// the store, say) is killed and fails the test. Default 1 minute.
	Timeout time.Duration
}

// Crash proves with real processes that the store's saves are atomic and
// survive a crash of the process (not a power loss: the kernel keeps
// what was written). It starts the test binary again as a child
// running the same test, which opens the store with Open and saves
// versions 1, 2, 3, … of each agent's state ([CrashState]) in a loop,
// printing each version whose Save returned; the parent kills it with
// SIGKILL after a random number of saves, Kills times. After each kill
// the store opens, and each agent's state loads whole and equal to the
// last version whose Save returned or the one in flight, never older,
// never torn or mixed.
//
// Call it once per test, from the test's goroutine, in a top-level test
// or subtest. The child runs that test again, so code before the call
// runs there too; in the child Crash never returns (the process ends when
// the parent kills it). The child is started with -test.run naming the
// test, -test.count=1, -test.v, and -test.short when the parent has it, and the
// parent's environment; other flags of the test binary are not passed,
// so a test that needs one (a DSN) reads it from the environment. It
// returns the data's directory, for checks of what the kills left
// behind. It skips where a process cannot be killed with SIGKILL
// (Windows, Plan 9, js, wasip1).
func Crash(t *testing.T, cfg CrashConfig) (dir string) {
	t.Helper()
	require.NotNil(t, cfg.Open, "storetest: CrashConfig.Open is nil")
	switch runtime.GOOS {
	case "windows", "plan9", "js", "wasip1":
		t.Skip("storetest: Crash needs child processes and SIGKILL")
	}
	if len(cfg.Agents) == 0 {
		cfg.Agents = []string{"scout"}
	}
	if d := os.Getenv(envCrashDir); d != "" {
		crashChild(d, cfg)
	}
	if cfg.Kills <= 0 {
		cfg.Kills = 200
		if testing.Short() {
			cfg.Kills = 20
		}
	}
	if cfg.MaxSaves <= 0 {
		cfg.MaxSaves = 12
	}
	if cfg.Seed == 0 {
		cfg.Seed = 1
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = time.Minute
	}
	dir = cfg.Dir
	if dir == "" {
		dir = crashDir(t)
	}
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(cfg.Seed, 20261128))
	known := map[string]int{} // each agent's newest version known to be stored
	total := 0
	for i := range cfg.Kills {
		reported := crashRun(t, i, dir, rng.IntN(cfg.MaxSaves), cfg.Timeout, known)
		s, err := cfg.Open(ctx, dir)
		require.NoError(t, err, "kill %d: the store must open after a crash", i)
		for _, id := range cfg.Agents {
			st, err := s.Load(ctx, id)
			if reported[id] == 0 && errors.Is(err, identity.ErrNotFound) {
				continue // killed before its first save completed
			}
			require.NoError(t, err, "kill %d: %s must load after a crash", i, id)
			v, err := crashVersion(st)
			require.NoError(t, err, "kill %d: %s", i, id)
			require.Contains(t, []int{reported[id], reported[id] + 1}, v,
				"kill %d: %s loaded version %d; the child reported %d", i, id, v, reported[id])
			require.Equal(t, StateJSON(t, CrashState(id, v)), StateJSON(t, st), "kill %d: %s version %d is not whole", i, id, v)
			total += v - known[id]
			known[id] = v
		}
		if c, ok := s.(io.Closer); ok {
			require.NoError(t, c.Close(), "kill %d: close", i)
		}
	}
	require.Positive(t, total, "no save survived %d kills", cfg.Kills)
	t.Logf("%d kills, %d saves survived: %v", cfg.Kills, total, known)
	return dir
}

// crashDir returns a new directory on tmpfs, removed when the test ends,
// or t.TempDir() where there is no /dev/shm.
func crashDir(t *testing.T) string {
	if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() {
		d, err := os.MkdirTemp("/dev/shm", "storetest-crash-")
		require.NoError(t, err)
		t.Cleanup(func() { _ = os.RemoveAll(d) })
		return d
	}
	return t.TempDir()
}

// crashRun starts the child, reads saves lines (checking that each
// agent's versions follow on from known), kills it, reads what it wrote
// before the kill, and returns each agent's last version reported saved.
// The child is killed however crashRun ends, and after timeout.
func crashRun(t *testing.T, i int, dir string, saves int, timeout time.Duration, known map[string]int) map[string]int {
	t.Helper()
	args := []string{"-test.run=" + runPattern(t.Name()), "-test.count=1", "-test.v"} // -test.v: a skip's reason reaches the failure message
	if testing.Short() {
		args = append(args, "-test.short")
	}
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), envCrashDir+"="+dir)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	defer func() { // a failed check leaves no child behind
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	}()
	expired := time.AfterFunc(timeout, func() { _ = cmd.Process.Kill() })
	defer expired.Stop()
	reported := map[string]int{}
	for id, v := range known {
		reported[id] = v
	}
	var other []string // lines that are not saves, for the failure message
	sc := bufio.NewScanner(stdout)
	read := func() bool {
		if !sc.Scan() {
			return false
		}
		f := strings.Fields(sc.Text())
		if len(f) != 3 || f[0] != "saved" {
			other = append(other, sc.Text())
		} else {
			v, err := strconv.Atoi(f[2])
			require.NoError(t, err, "kill %d: child printed %q", i, sc.Text())
			require.Equal(t, reported[f[1]]+1, v, "kill %d: versions of %s follow on", i, f[1])
			reported[f[1]] = v
		}
		return true
	}
	for range saves {
		if !read() {
			break
		}
	}
	killed := expired.Stop() // false: the timeout killed it
	require.NoError(t, cmd.Process.Kill())
	for read() { // lines written before the kill landed
	}
	werr := cmd.Wait()
	require.True(t, killed, "kill %d: the child had not made %d saves after %v; stdout: %q; stderr: %s", i, saves, timeout, other, stderr.String())
	var ee *exec.ExitError
	require.True(t, errors.As(werr, &ee), "kill %d: child ended with %v (did the test skip in the child?); stdout: %q; stderr: %s", i, werr, other, stderr.String())
	require.False(t, ee.Exited(), "kill %d: child exited on its own (%v); stdout: %q; stderr: %s", i, werr, other, stderr.String())
	return reported
}

// runPattern is the -test.run pattern that selects exactly the test
// named name ("TestA/sub"), level by level.
func runPattern(name string) string {
	parts := strings.Split(name, "/")
	for i, p := range parts {
		parts[i] = "^" + regexp.QuoteMeta(p) + "$"
	}
	return strings.Join(parts, "/")
}

// crashChild is the child of [Crash]: one goroutine per agent loads the
// agent's version and saves the next ones until the process is killed
// (bounded, in case the parent is gone), printing "saved ID N" after each
// Save returns. It exits with status 3 on any error.
func crashChild(dir string, cfg CrashConfig) {
	die := func(err error) {
		fmt.Fprintln(os.Stderr, "storetest crash child:", err)
		os.Exit(3)
	}
	ctx := context.Background()
	s, err := cfg.Open(ctx, dir)
	if err != nil {
		die(err)
	}
	var out sync.Mutex
	var wg sync.WaitGroup
	for _, id := range cfg.Agents {
		wg.Go(func() {
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
				if err := s.Save(ctx, CrashState(id, v)); err != nil {
					die(err)
				}
				out.Lock()
				_, err := fmt.Fprintf(os.Stdout, "saved %s %d\n", id, v)
				out.Unlock()
				if err != nil {
					die(err)
				}
			}
		})
	}
	wg.Wait()
	os.Exit(0)
}

// CrashState returns version v (from 1) of agent id's state in [Crash].
// Every part is derived from id and v, and lists grow, shrink and slide
// from one version to the next (the goal history drops its oldest and
// changes its last), so that a store writing only what changed writes
// some rows and not others, and a torn or mixed save cannot pass for a
// whole one. Its Worldview is "version N".
func CrashState(id string, v int) *identity.AgentState {
	t0 := time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC)
	tag := fmt.Sprintf("%s v=%d ", id, v)
	st := &identity.AgentState{
		Identity: identity.Identity{
			AgentID: id, Name: "N", Worldview: "version " + strconv.Itoa(v),
			Narrative: strings.Repeat(tag, 800/len(tag)), CreatedAt: t0,
		},
		Suffering: suffering.State{
			Active: []suffering.Stressor{{Type: suffering.Futility, Description: tag, Severity: float64(v%100) / 100,
				Peak: float64(v%100) / 100, RatePerDay: 0.03, Condition: tag, Onset: t0}},
			Resolved:      []suffering.Stressor{},
			LastEscalated: t0.Add(time.Duration(v) * time.Second),
			CrisisCycles:  v % 3,
		},
	}
	for g := max(0, v-15); g <= v; g++ {
		goal := identity.Goal{ID: fmt.Sprintf("g%d", g), Objective: fmt.Sprintf("goal %d", g), Status: identity.Done, Started: t0, Ended: t0}
		if g == v {
			goal.Status, goal.Ended, goal.Objective = identity.Active, time.Time{}, tag
		}
		st.Identity.Goals = append(st.Identity.Goals, goal)
	}
	for i := range v%12 + 1 {
		st.Identity.Questions = append(st.Identity.Questions, fmt.Sprintf("%sq%d", tag, i))
	}
	for i := range v%20 + 1 {
		st.Identity.Opinions = append(st.Identity.Opinions, identity.Opinion{Text: fmt.Sprintf("%sop%d", tag, i), Domain: "d", Formed: t0.Add(time.Duration(v) * time.Second)})
	}
	for i := range v%5 + 1 {
		st.Identity.Discoveries = append(st.Identity.Discoveries, identity.Discovery{Text: fmt.Sprintf("%sd%d", tag, i), Source: fmt.Sprint(i), At: t0})
	}
	for i := range v % 3 {
		st.Inbox = append(st.Inbox, identity.AgentMessage{From: "peer", Text: fmt.Sprintf("%sm%d", tag, i), At: t0})
	}
	return st
}

// crashVersion returns the version of a state written by [CrashState].
func crashVersion(st *identity.AgentState) (int, error) {
	n, ok := strings.CutPrefix(st.Identity.Worldview, "version ")
	if !ok {
		return 0, fmt.Errorf("not a state of storetest.CrashState: worldview %q", st.Identity.Worldview)
	}
	return strconv.Atoi(n)
}
