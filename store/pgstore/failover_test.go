package pgstore_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/existence"
	"github.com/existence-loop/sdk/existence/event"
	"github.com/existence-loop/sdk/existence/runner"
	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/internal/pgtest"
	"github.com/existence-loop/sdk/lease"
	"github.com/existence-loop/sdk/llm/llmtest"
	"github.com/existence-loop/sdk/llm/middleware"
	"github.com/existence-loop/sdk/store/pgstore"
	"github.com/existence-loop/sdk/task"
)

// The failover test re-runs this test binary as the worker processes: with
// $PGSTORE_WORKER set, TestMain runs worker() instead of the tests.
const workerEnv = "PGSTORE_WORKER"

func init() {
	if os.Getenv(workerEnv) != "" {
		os.Exit(worker())
	}
}

// workerConfig is what the test hands a worker process (as JSON in
// $PGSTORE_WORKER).
type workerConfig struct {
	URL       string
	Owner     string
	Log       string // JSON-lines event log
	Max       int    // agents per process
	Batch     int    // agents claimed per round, so that processes spread
	TTL       time.Duration
	Heartbeat time.Duration
	Renew     time.Duration
}

// logLine is one event of a worker's log.
type logLine struct {
	T       int64     `json:"t"` // unix nanoseconds
	Ev      string    `json:"ev"`
	Owner   string    `json:"owner"`
	Agent   string    `json:"agent,omitempty"`
	Epoch   int64     `json:"epoch,omitempty"`
	Updated time.Time `json:"updated,omitzero"`
	Err     string    `json:"err,omitempty"`
}

// logStore wraps an agent's fenced view to log every save that returned.
type logStore struct {
	*pgstore.Fenced
	log func(logLine)
}

func (l logStore) Save(ctx context.Context, st *identity.AgentState) error {
	err := l.Fenced.Save(ctx, st)
	if err == nil {
		l.log(logLine{Ev: "save", Agent: st.Identity.AgentID, Epoch: l.Lease().Epoch, Updated: st.UpdatedAt})
	}
	return err
}

const workerReply = `{"action": "goal", "content": "map the workspace", "reasoning": "to know it",
  "worldview_update": "", "new_open_questions": [], "new_opinions": [],
  "suffering_assessment": {"new_stressors": [], "resolved": []}}`

// worker runs agents leased from the database with a runner.Runner
// until SIGTERM (graceful: save every agent, release every lease) or
// SIGKILL.
func worker() int {
	var cfg workerConfig
	if err := json.Unmarshal([]byte(os.Getenv(workerEnv)), &cfg); err != nil {
		fmt.Fprintln(os.Stderr, "worker:", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	f, err := os.OpenFile(cfg.Log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		fmt.Fprintln(os.Stderr, "worker:", err)
		return 2
	}
	var logMu sync.Mutex
	logf := func(l logLine) {
		l.T, l.Owner = time.Now().UnixNano(), cfg.Owner
		b, _ := json.Marshal(l)
		logMu.Lock()
		f.Write(append(b, '\n')) // unbuffered: a SIGKILL loses nothing written
		logMu.Unlock()
	}
	s, err := pgstore.Open(ctx, cfg.URL, pgstore.Options{Owner: cfg.Owner, TTL: cfg.TTL, ClaimBatch: cfg.Batch, MaxConns: 8, Logger: discard})
	if err != nil {
		fmt.Fprintln(os.Stderr, "worker:", err)
		return 2
	}
	defer s.Close()
	r, err := runner.New(runner.Config{
		Leases: s, MaxAgents: cfg.Max, RenewEvery: cfg.Renew,
		Heartbeat: cfg.Heartbeat, AutonomyWorkers: 4, PriorityWorkers: 2, NoStagger: true, Logger: discard,
		NewAgent: func(ctx context.Context, l lease.Lease) (existence.Config, error) {
			fake := llmtest.NewFake(llmtest.Reply{Text: workerReply})
			fake.Repeat = true
			fs := s.Fenced(l)
			logf(logLine{Ev: "claim", Agent: l.AgentID, Epoch: l.Epoch})
			return existence.Config{
				ID: l.AgentID, Name: "N" + l.AgentID, Model: fake, Store: logStore{fs, logf}, Tasks: fs.Tasks(),
				Calls: existence.CallConfig{Retry: middleware.RetryPolicy{Attempts: 1}},
			}, nil
		},
		Observer: func(e event.Event) {
			switch {
			case e.Kind == event.Error && errors.Is(e.Err, pgstore.ErrFenced):
				logf(logLine{Ev: "fenced", Agent: e.AgentID, Err: e.Error})
			case e.Kind == event.LeaseLost:
				logf(logLine{Ev: "lost", Agent: e.AgentID})
			case e.Kind == event.Task && e.Err == nil && e.TaskStatus == task.Completed:
				logf(logLine{Ev: "task-done", Agent: e.AgentID})
			case e.Kind == event.Error && ctx.Err() == nil:
				logf(logLine{Ev: "agent-error", Agent: e.AgentID, Err: e.Error})
			}
		},
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "worker:", err)
		return 2
	}
	go s.Relay(ctx, cfg.Renew, func(id string) pgstore.Recipient {
		if a := r.Agent(id); a != nil {
			return a
		}
		return nil
	})
	if err := r.Run(ctx); err != nil {
		logf(logLine{Ev: "run-error", Err: err.Error()})
	}
	logf(logLine{Ev: "exit"})
	return 0
}

// TestFailover: three processes share 300 agents on a fast heartbeat; one
// is killed with SIGKILL; within TTL plus one heartbeat every agent runs
// again elsewhere, no agent ran in two processes at once, no task or
// message is lost, and every save that returned is in the database.
func TestFailover(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three processes")
	}
	nAgents := 300
	ttl, hb, renew := 2*time.Second, time.Second, 250*time.Millisecond
	if raceEnabled {
		ttl, hb, renew = 3*time.Second, 3*time.Second, 500*time.Millisecond
	}
	// For measuring (README figures): PGSTORE_FAILOVER_AGENTS=900
	// PGSTORE_FAILOVER_HEARTBEAT=1s go test -run Failover -v.
	if v, err := strconv.Atoi(os.Getenv("PGSTORE_FAILOVER_AGENTS")); err == nil && v > 0 {
		nAgents = v
	}
	if v, err := time.ParseDuration(os.Getenv("PGSTORE_FAILOVER_HEARTBEAT")); err == nil && v > 0 {
		hb = v
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	url := pgtest.New(t)
	s := open(t, url, "test", ttl)
	db := s.Pool()
	mustExec := func(q string, args ...any) {
		t.Helper()
		_, err := db.Exec(ctx, q, args...)
		require.NoError(t, err)
	}
	// The database's own record of every write and every claim.
	mustExec(`CREATE TABLE save_log (id bigserial, agent_id text, epoch bigint, updated_at timestamptz, at timestamptz DEFAULT clock_timestamp());
		CREATE FUNCTION log_save() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
			INSERT INTO save_log (agent_id, epoch, updated_at) VALUES (NEW.agent_id, NEW.epoch, NEW.updated_at); RETURN NEW; END $$;
		CREATE TRIGGER log_save AFTER INSERT OR UPDATE ON existence_states FOR EACH ROW EXECUTE FUNCTION log_save();
		CREATE TABLE claim_log (agent_id text, epoch bigint, owner text, at timestamptz DEFAULT clock_timestamp());
		CREATE FUNCTION log_claim() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
			IF NEW.epoch <> OLD.epoch THEN INSERT INTO claim_log (agent_id, epoch, owner) VALUES (NEW.agent_id, NEW.epoch, NEW.owner); END IF;
			RETURN NEW; END $$;
		CREATE TRIGGER log_claim AFTER UPDATE ON existence_leases FOR EACH ROW EXECUTE FUNCTION log_claim();`)
	var agentIDs []string
	for i := range nAgents {
		agentIDs = append(agentIDs, fmt.Sprintf("agent-%03d", i))
	}
	require.NoError(t, s.Enroll(ctx, agentIDs...))
	nTasks, nMsgs := 0, 0
	send := func(n int) {
		t.Helper()
		for range n {
			_, err := s.Tasks().Submit(ctx, fmt.Sprint("task ", nTasks), "")
			require.NoError(t, err)
			nTasks++
			to := agentIDs[rand.IntN(nAgents)]
			_, err = s.Send(ctx, to, nMsgs%3 == 0, identity.AgentMessage{From: "Cipher", Text: fmt.Sprint("message ", nMsgs)})
			require.NoError(t, err)
			nMsgs++
		}
	}
	send(50)

	dir := t.TempDir()
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		for i := range 3 {
			counts := map[string]int{}
			var errs []string
			for _, l := range readLog(t, filepath.Join(dir, fmt.Sprintf("w%d.log", i))) {
				counts[l.Ev]++
				if l.Err != "" && len(errs) < 3 {
					errs = append(errs, l.Ev+": "+l.Err)
				}
			}
			t.Logf("worker-%d events %v; first errors %q", i, counts, errs)
		}
	})
	procs := make([]*exec.Cmd, 3)
	for i := range procs {
		cfg := workerConfig{URL: url, Owner: fmt.Sprintf("worker-%d", i), Log: filepath.Join(dir, fmt.Sprintf("w%d.log", i)),
			Max: nAgents / 2, Batch: 40, TTL: ttl, Heartbeat: hb, Renew: renew}
		b, _ := json.Marshal(cfg)
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), workerEnv+"="+string(b))
		cmd.Stderr = os.Stderr
		require.NoError(t, cmd.Start())
		procs[i] = cmd
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	}

	// Wait until every agent has saved and the three processes share them.
	waitFor := func(what string, limit time.Duration, cond func() bool) time.Duration {
		t.Helper()
		start := time.Now()
		for !cond() {
			if time.Since(start) > limit {
				require.Fail(t, "timed out", "%s: not after %v", what, limit)
			}
			time.Sleep(50 * time.Millisecond)
		}
		return time.Since(start)
	}
	count := func(q string, args ...any) int {
		t.Helper()
		var n int
		require.NoError(t, db.QueryRow(ctx, q, args...).Scan(&n))
		return n
	}
	waitFor("all agents running, spread over the three processes", 40*time.Second, func() bool {
		return count(`SELECT count(DISTINCT agent_id) FROM save_log`) == nAgents &&
			count(`SELECT count(*) FROM leases WHERE live`) == nAgents &&
			count(`SELECT count(DISTINCT owner) FROM leases WHERE live`) == 3
	})
	perOwner := map[string]int{}
	rows, _ := db.Query(ctx, `SELECT owner, count(*) FROM leases WHERE live GROUP BY owner`)
	for rows.Next() {
		var o string
		var n int
		rows.Scan(&o, &n)
		perOwner[o] = n
	}
	t.Logf("agents per process before the kill: %v", perOwner)
	var steadyFrom time.Time
	require.NoError(t, db.QueryRow(ctx, `SELECT clock_timestamp()`).Scan(&steadyFrom))
	require.Len(t, perOwner, 3, "agents spread over the processes")
	send(50)
	steadyLocal := time.Now()
	waitFor("a steady window", 10*time.Second, func() bool { return time.Since(steadyLocal) > 2*time.Second })

	// SIGKILL worker-0.
	var victims []string
	vrows, _ := db.Query(ctx, `SELECT agent_id FROM leases WHERE owner = 'worker-0' AND live`)
	for vrows.Next() {
		var id string
		vrows.Scan(&id)
		victims = append(victims, id)
	}
	var killedAt time.Time
	require.NoError(t, db.QueryRow(ctx, `SELECT clock_timestamp()`).Scan(&killedAt))
	var steadySaves int
	var steadySecs float64
	require.NoError(t, db.QueryRow(ctx, `SELECT count(*), extract(epoch FROM $2::timestamptz - $1::timestamptz)::float8 FROM save_log WHERE at BETWEEN $1::timestamptz AND $2::timestamptz`,
		steadyFrom, killedAt).Scan(&steadySaves, &steadySecs))
	t.Logf("steady state: %.0f saves/s by %d agents at a %v heartbeat over %.1f s", float64(steadySaves)/steadySecs, nAgents, hb, steadySecs)
	require.NoError(t, procs[0].Process.Signal(syscall.SIGKILL))
	procs[0].Wait()
	send(50)
	waitFor("every agent of the killed process running elsewhere", 30*time.Second, func() bool {
		return count(`SELECT count(DISTINCT s.agent_id) FROM save_log s JOIN claim_log c USING (agent_id, epoch)
			WHERE s.agent_id = ANY($1) AND s.at > $2 AND c.owner <> 'worker-0'`, victims, killedAt) == len(victims)
	})
	var takeover time.Duration
	require.NoError(t, db.QueryRow(ctx, `SELECT extract(epoch FROM max(first) - $2) FROM (
			SELECT min(s.at) AS first FROM save_log s JOIN claim_log c USING (agent_id, epoch)
			WHERE s.agent_id = ANY($1) AND s.at > $2 AND c.owner <> 'worker-0' GROUP BY s.agent_id) f`,
		victims, killedAt).Scan(&secs{&takeover}))
	var claimed time.Duration
	require.NoError(t, db.QueryRow(ctx, `SELECT extract(epoch FROM max(at) - $2) FROM claim_log WHERE agent_id = ANY($1) AND at > $2 AND owner <> 'worker-0'`,
		victims, killedAt).Scan(&secs{&claimed}))
	t.Logf("takeover of %d agents after SIGKILL: all claimed after %v, all saved by their new owner after %v (TTL %v + heartbeat %v)",
		len(victims), claimed, takeover, ttl, hb)
	assert.LessOrEqual(t, takeover, ttl+hb+slack(), "takeover took %v, want within TTL + one heartbeat (%v, + %v slack on a loaded machine)", takeover, ttl+hb, slack())

	// Every task ends completed and every message is acknowledged.
	waitFor("every task done and every message delivered", 30*time.Second, func() bool {
		return count(`SELECT count(*) FROM existence_tasks WHERE status = 'completed'`) == nTasks &&
			count(`SELECT count(*) FROM existence_messages WHERE acked_at IS NOT NULL`) == nMsgs
	})
	for _, p := range procs[1:] {
		p.Process.Signal(syscall.SIGTERM)
	}
	for _, p := range procs[1:] {
		assert.NoError(t, p.Wait(), "graceful stop")
	}
	assert.Zero(t, count(`SELECT count(*) FROM leases WHERE live`), "leases still live after graceful stops: not released")
	assert.Zero(t, count(`SELECT count(*) FROM existence_tasks WHERE status <> 'completed'`), "tasks not completed")

	// No agent ran in two processes at once: each epoch has one owner, and
	// the writes of an agent never go back to an older epoch, nor does an
	// older epoch write after a newer one has.
	assert.Zero(t, count(`SELECT count(*) FROM (SELECT agent_id, epoch FROM claim_log GROUP BY 1, 2 HAVING count(DISTINCT owner) > 1) x`),
		"epochs with two owners")
	assert.Zero(t, count(`SELECT count(*) FROM (SELECT epoch < max(epoch) OVER (PARTITION BY agent_id ORDER BY id) AS back FROM save_log) x WHERE back`),
		"writes by an older epoch after a newer one")
	assert.Zero(t, count(`SELECT count(*) FROM save_log s JOIN claim_log c USING (agent_id, epoch) WHERE s.at < c.at`),
		"writes before their epoch was claimed")

	// The event logs agree: every save a worker saw return is in the
	// database under the epoch that worker held, and no worker saved an
	// agent under an epoch it did not claim.
	type key struct {
		agent   string
		updated int64
	}
	saved := map[key]int64{}
	srows, _ := db.Query(ctx, `SELECT agent_id, updated_at, epoch FROM save_log`)
	for srows.Next() {
		var k key
		var u time.Time
		var e int64
		srows.Scan(&k.agent, &u, &e)
		k.updated = u.UnixMicro()
		saved[k] = e
	}
	claimedBy := map[string]string{}
	crows, _ := db.Query(ctx, `SELECT agent_id, epoch, owner FROM claim_log`)
	for crows.Next() {
		var a, o string
		var e int64
		crows.Scan(&a, &e, &o)
		claimedBy[a+"/"+strconv.FormatInt(e, 10)] = o
	}
	returned, fenced := 0, 0
	for i := range procs {
		for _, l := range readLog(t, filepath.Join(dir, fmt.Sprintf("w%d.log", i))) {
			switch l.Ev {
			case "save":
				returned++
				e, ok := saved[key{l.Agent, l.Updated.UnixMicro()}]
				if assert.True(t, ok, "%s's save of %s at %v returned but is not in the database", l.Owner, l.Agent, l.Updated) {
					assert.Equal(t, l.Owner, claimedBy[l.Agent+"/"+strconv.FormatInt(e, 10)], "%s saved %s under epoch %d of another owner", l.Owner, l.Agent, e)
				}
			case "fenced":
				fenced++
			case "run-error", "agent-error":
				assert.Fail(t, "worker error", "worker event %+v", l)
			}
		}
	}
	t.Logf("%d saves returned and found, %d fenced writes refused, %d tasks, %d messages", returned, fenced, nTasks, nMsgs)
	sort.Strings(victims)
}

// slack is the allowance over TTL + heartbeat for a loaded machine (the
// race detector, other jobs on two cores).
func slack() time.Duration { return 3 * time.Second }

// secs scans a number of seconds into a Duration.
type secs struct{ d *time.Duration }

func (s secs) Scan(src any) error {
	var f float64
	switch v := src.(type) {
	case float64:
		f = v
	case string:
		var err error
		if f, err = strconv.ParseFloat(v, 64); err != nil {
			return err
		}
	default:
		return fmt.Errorf("secs: %T", src)
	}
	*s.d = time.Duration(f * float64(time.Second))
	return nil
}

func readLog(t *testing.T, path string) []logLine {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	var out []logLine
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var l logLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			continue // the line a SIGKILL cut short
		}
		out = append(out, l)
	}
	return out
}
