package pgstore_test

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/internal/pgtest"
	"github.com/existence-loop/sdk/store/pgstore"
)

// waitUntil waits until cond holds, failing the test after 20 s. It
// polls: what it waits for happens in other goroutines or the server.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			require.Fail(t, "timed out", "waiting for %s", what)
		}
		runtime.Gosched()
		time.Sleep(time.Millisecond)
	}
}

// holdLeaseRow locks agentID's lease row FOR UPDATE in a transaction of
// its own until release is called: a save fenced on that row waits.
func holdLeaseRow(t *testing.T, url, agentID string) (release func()) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	require.NoError(t, err)
	tx, err := conn.Begin(ctx)
	require.NoError(t, err)
	_, err = tx.Exec(ctx, `SELECT 1 FROM existence_leases WHERE agent_id = $1 FOR UPDATE`, agentID)
	require.NoError(t, err)
	var once sync.Once
	release = func() {
		once.Do(func() {
			require.NoError(t, tx.Rollback(ctx))
			require.NoError(t, conn.Close(ctx))
		})
	}
	t.Cleanup(release)
	return release
}

// lockWaits counts the lock requests of the server that wait.
func lockWaits(t *testing.T, s *pgstore.Store) int {
	t.Helper()
	var n int
	require.NoError(t, s.Pool().QueryRow(context.Background(), `SELECT count(*) FROM pg_locks WHERE NOT granted`).Scan(&n))
	return n
}

// inbox is a recipient that puts the messages in a state without saving
// it: the next save acknowledges them.
type inbox struct{ st *identity.AgentState }

func (r inbox) DeliverToInbox(_ context.Context, m identity.AgentMessage) error {
	r.st.Inbox = append(r.st.Inbox, m)
	return nil
}

func (r inbox) SayAsHost(_ context.Context, text string) error {
	r.st.Host = append(r.st.Host, identity.AgentMessage{From: "host", Text: text, At: time.Now()})
	return nil
}

// TestGroupCommitFencesEachAgent: saves of six agents gathered into one
// group commit, one of them by a process that lost that agent's lease:
// the other five are written, with the message acknowledgement one of
// them carries, and only the fenced one is refused (a FencedError naming
// the new holder), its message left pending for the new holder.
func TestGroupCommitFencesEachAgent(t *testing.T) {
	ctx := context.Background()
	url := pgtest.New(t)
	s, err := pgstore.Open(ctx, url, pgstore.Options{Owner: "host-a:1", TTL: time.Hour, MaxBatch: 64, MaxWait: -1})
	require.NoError(t, err)
	t.Cleanup(s.Close)
	b := open(t, url, "host-b:2", time.Hour)
	var agents []string
	for i := range 6 {
		agents = append(agents, fmt.Sprintf("agent-%d", i))
	}
	require.NoError(t, s.Enroll(ctx, append(agents, "blocker")...))
	ls, err := s.Claim(ctx, 6)
	require.NoError(t, err)
	require.Len(t, ls, 6, "agent-0 … agent-5; blocker stays unleased")

	// agent-3's lease lapses and b takes it over; s does not know yet.
	expire(t, s, "agent-3")
	require.Equal(t, []string{"agent-3"}, ids(t, b, 1), "b claimed")

	// A message for agent-1 and one for agent-3, handed to s's agents and
	// acknowledged by their next saves.
	states := map[string]*identity.AgentState{}
	for _, id := range agents {
		states[id] = state(id, "saved in a group commit by a")
	}
	for _, id := range []string{"agent-1", "agent-3"} {
		_, err := b.Send(ctx, id, false, identity.AgentMessage{From: "Cipher", Text: "hello " + id})
		require.NoError(t, err)
		n, err := s.DeliverPending(ctx, id, inbox{states[id]})
		require.NoError(t, err)
		require.Equal(t, 1, n)
	}

	// The first save waits on a lock, so the next six queue behind it and
	// go together in the next group commit.
	release := holdLeaseRow(t, url, "blocker")
	first := make(chan error, 1)
	go func() { first <- s.Save(ctx, state("blocker", "first")) }()
	waitUntil(t, "the first save to wait on the lock", func() bool { return lockWaits(t, s) > 0 })
	before := s.Stats()
	results := make(map[string]chan error, len(agents))
	for _, id := range agents {
		done := make(chan error, 1)
		results[id] = done
		st := states[id]
		go func() { done <- s.Save(ctx, st) }()
	}
	waitUntil(t, "six saves queued", func() bool { return pgstore.QueuedSaves(s) == len(agents) })
	release()
	require.NoError(t, <-first)

	for _, id := range agents {
		err := <-results[id]
		if id != "agent-3" {
			assert.NoError(t, err, "%s's save", id)
			continue
		}
		var fe *pgstore.FencedError
		require.ErrorAs(t, err, &fe, "the fenced agent's save")
		assert.Equal(t, "host-b:2", fe.Holder, "%v", err)
		t.Log(err)
	}
	st := s.Stats()
	assert.Equal(t, int64(2), st.Batches-before.Batches, "the first save's group commit, then one for the six")
	assert.Equal(t, int64(6), st.BatchMax)
	assert.Equal(t, int64(6), st.Saves-before.Saves, "saves written: the first, and five of the six")
	assert.Equal(t, int64(1), st.SavesFenced-before.SavesFenced, "saves fenced")

	for _, id := range agents {
		got, err := b.Load(ctx, id)
		if id == "agent-3" {
			assert.ErrorIs(t, err, identity.ErrNotFound, "the fenced save wrote")
			continue
		}
		require.NoError(t, err, id)
		assert.Equal(t, "saved in a group commit by a", got.Identity.Narrative, id)
	}
	for id, want := range map[string]int{"agent-1": 0, "agent-3": 1} {
		pending, err := b.Pending(ctx, id)
		require.NoError(t, err)
		assert.Len(t, pending, want, "%s's pending messages: acknowledged with a written save only", id)
	}
	loaded, err := b.Load(ctx, "agent-1")
	require.NoError(t, err)
	require.Len(t, loaded.Inbox, 1)
	assert.Equal(t, "hello agent-1", loaded.Inbox[0].Text)
}

// TestRenewalsAreNotStarvedBySaves: with every connection of the saves
// taken by a group commit that waits (a lock held elsewhere) and more saves
// queued behind it, renewals and claims still run at once, on the
// connections reserved for the leases, and find their full margin.
func TestRenewalsAreNotStarvedBySaves(t *testing.T) {
	ctx := context.Background()
	url := pgtest.New(t)
	s, err := pgstore.Open(ctx, url, pgstore.Options{Owner: "host-a:1", TTL: time.Hour, MaxConns: 1, MaxWait: -1})
	require.NoError(t, err)
	t.Cleanup(s.Close)
	var agents []string
	for i := range 100 {
		agents = append(agents, fmt.Sprintf("agent-%03d", i))
	}
	require.NoError(t, s.Enroll(ctx, agents...))
	ls, err := s.Claim(ctx, 100)
	require.NoError(t, err)
	require.Len(t, ls, 100)
	require.NoError(t, s.Enroll(ctx, "blocker", "late-1", "late-2"))

	release := holdLeaseRow(t, url, "blocker")
	saves := make(chan error, 11)
	go func() { saves <- s.Save(ctx, state("blocker", "waits")) }()
	observer := open(t, url, "observer", time.Hour)
	waitUntil(t, "the group commit to wait on the lock", func() bool { return lockWaits(t, observer) > 0 })
	for _, id := range agents[:10] {
		go func() { saves <- s.Save(ctx, state(id, "queued")) }()
	}
	waitUntil(t, "ten saves queued", func() bool { return pgstore.QueuedSaves(s) == 10 })

	before := s.Stats()
	rctx, cancel := context.WithTimeout(ctx, 10*time.Second) // bounds a failure; a renewal takes milliseconds
	defer cancel()
	lost, err := s.Renew(rctx)
	require.NoError(t, err, "renewal while the saves' connection is taken")
	assert.Empty(t, lost)
	more, err := s.Claim(rctx, 2)
	require.NoError(t, err, "claim while the saves' connection is taken")
	assert.Len(t, more, 2)
	st := s.Stats()
	assert.Equal(t, int64(100), st.LeasesRenewed-before.LeasesRenewed)
	assert.Zero(t, st.LeasesLate, "no renewal late")
	assert.Greater(t, st.MarginMin, 59*time.Minute, "a renewal right after the claim finds its lease nearly whole")
	assert.Equal(t, 10, pgstore.QueuedSaves(s), "the saves still wait")
	assert.Positive(t, st.LeaseRoundTrips-before.LeaseRoundTrips)

	release()
	for range 11 {
		require.NoError(t, <-saves)
	}
}

// fakeNow is a settable clock for Options.Now.
type fakeNow struct {
	mu sync.Mutex
	t  time.Time
}

func (f *fakeNow) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.t
}

func (f *fakeNow) Advance(d time.Duration) {
	f.mu.Lock()
	f.t = f.t.Add(d)
	f.mu.Unlock()
}

// TestLateRenewals: a renewal that finds less than LateMargin (TTL/3) of
// its lease left is late: counted, reported once by LateRenewals with the
// margin left, and shown by the margin percentile; a renewal that fails
// with the lease under the margin is late too, and lost only once the
// lease has run out by this process's clock.
func TestLateRenewals(t *testing.T) {
	ctx := context.Background()
	clock := &fakeNow{t: time.Now()}
	s, err := pgstore.Open(ctx, pgtest.New(t), pgstore.Options{Owner: "host-a:1", TTL: 15 * time.Second, Now: clock.Now})
	require.NoError(t, err)
	t.Cleanup(s.Close)
	require.NoError(t, s.Enroll(ctx, "a", "b"))
	ls, err := s.Claim(ctx, 2)
	require.NoError(t, err)
	require.Len(t, ls, 2)
	epochs := map[string]int64{ls[0].AgentID: ls[0].Epoch, ls[1].AgentID: ls[1].Epoch}

	clock.Advance(5 * time.Second) // on time: 10 s left
	_, err = s.Renew(ctx)
	require.NoError(t, err)
	assert.Empty(t, s.LateRenewals())
	clock.Advance(11 * time.Second) // a renewal a round late: 4 s left
	lost, err := s.Renew(ctx)
	require.NoError(t, err)
	assert.Empty(t, lost)
	late := s.LateRenewals()
	require.Len(t, late, 2)
	for _, l := range late {
		assert.Equal(t, epochs[l.AgentID], l.Epoch)
		assert.Equal(t, 4*time.Second, l.Left)
		assert.Equal(t, 15*time.Second, l.TTL)
		assert.Equal(t, 5*time.Second, l.Margin)
		assert.True(t, l.Renewed)
	}
	assert.Empty(t, s.LateRenewals(), "reported once")
	st := s.Stats()
	assert.Equal(t, int64(2), st.LeasesLate)
	assert.Equal(t, int64(4), st.LeasesRenewed)
	assert.Equal(t, int64(4), st.MarginSamples)
	assert.Equal(t, 4*time.Second, st.MarginMin)
	assert.Equal(t, 4*time.Second, st.MarginP1, "the first percentile of 10 s, 10 s, 4 s, 4 s")
	assert.Equal(t, 5*time.Second, st.LateMargin)

	// The renewal fails (its context ended: a database that cannot be
	// reached) with 2 s left: late, not lost; then the lease runs out.
	dead, cancel := context.WithCancel(ctx)
	cancel()
	clock.Advance(13 * time.Second)
	lost, err = s.Renew(dead)
	require.Error(t, err)
	assert.Empty(t, lost, "not lost while the lease lasts by this process's clock")
	late = s.LateRenewals()
	require.Len(t, late, 2)
	assert.False(t, late[0].Renewed)
	assert.Equal(t, 2*time.Second, late[0].Left)
	clock.Advance(3 * time.Second)
	lost, err = s.Renew(dead)
	require.Error(t, err)
	assert.ElementsMatch(t, []string{"a", "b"}, lost, "lost once run out by this process's clock")
	assert.Equal(t, int64(2), s.Stats().LeasesLost)
	require.ErrorIs(t, s.Save(ctx, state("a", "after the lease ran out")), pgstore.ErrFenced)
	lost, err = s.Renew(ctx)
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{"a", "b"}, lost, "still lost until released")
	assert.Equal(t, int64(2), s.Stats().LeasesLost, "each loss counted once")
}

// TestNextProbe: a Next that finds nothing to claim is answered by the
// shared probe, without the claiming transaction; a task to claim, or a
// lease lost unbeknown to the process, goes through the transaction.
func TestNextProbe(t *testing.T) {
	ctx := context.Background()
	url := pgtest.New(t)
	a, b := open(t, url, "host-a:1", time.Hour), open(t, url, "host-b:2", time.Hour)
	require.NoError(t, a.Enroll(ctx, "scout", "analyst"))
	require.Len(t, ids(t, a, 2), 2)
	got, err := a.Tasks().Next(ctx, "scout")
	require.NoError(t, err)
	assert.Nil(t, got)
	st := a.Stats()
	assert.Equal(t, int64(1), st.TaskProbes)
	assert.Zero(t, st.TaskClaims)

	_, err = a.Tasks().Submit(ctx, "map the workspace", "analyst")
	require.NoError(t, err)
	got, err = a.Tasks().Next(ctx, "scout")
	require.NoError(t, err)
	assert.Nil(t, got, "the task is analyst's")
	got, err = a.Tasks().Next(ctx, "analyst")
	require.NoError(t, err)
	require.NotNil(t, got)
	assert.Equal(t, "map the workspace", got.Description)
	again, err := a.Tasks().Next(ctx, "analyst")
	require.NoError(t, err)
	require.NotNil(t, again, "the assigned task is handed back")
	assert.Equal(t, got.ID, again.ID)
	st = a.Stats()
	assert.Equal(t, int64(2), st.TaskProbes, "scout twice")
	assert.Equal(t, int64(2), st.TaskClaims, "analyst twice")

	_, err = a.Tasks().Submit(ctx, "anyone's task", "")
	require.NoError(t, err)
	got, err = a.Tasks().Next(ctx, "scout")
	require.NoError(t, err)
	require.NotNil(t, got, "a task for any agent")

	// a's lease of scout lapses and b takes it over; a has not noticed.
	expire(t, a, "scout")
	require.Equal(t, []string{"scout"}, ids(t, b, 10))
	_, err = a.Tasks().Next(ctx, "scout")
	require.ErrorIs(t, err, pgstore.ErrFenced, "the stale holder's Next")
}

// TestSaveAfterClose: a save after Close is refused with ErrClosed; one
// queued before it is written.
func TestSaveAfterClose(t *testing.T) {
	ctx := context.Background()
	url := pgtest.New(t)
	s, err := pgstore.Open(ctx, url, pgstore.Options{Owner: "a"})
	require.NoError(t, err)
	require.NoError(t, s.Save(ctx, state("scout", "before")))
	s.Close()
	require.ErrorIs(t, s.Save(ctx, state("scout", "after")), pgstore.ErrClosed)
	_, err = s.Tasks().Next(ctx, "scout")
	require.ErrorIs(t, err, pgstore.ErrClosed)
	r := open(t, url, "b", 0)
	got, err := r.Load(ctx, "scout")
	require.NoError(t, err)
	assert.Equal(t, "before", got.Identity.Narrative)
}

// TestStorageTuned: the tables rewritten every few seconds keep room on
// their pages for HOT updates, and the states are compressed with lz4 on
// a server built with it.
func TestStorageTuned(t *testing.T) {
	ctx := context.Background()
	s := open(t, pgtest.New(t), "a", 0)
	for table, want := range map[string]string{"existence_leases": "fillfactor=50", "existence_states": "fillfactor=70"} {
		var opts []string
		require.NoError(t, s.Pool().QueryRow(ctx, `SELECT coalesce(reloptions, '{}') FROM pg_class WHERE relname = $1`, table).Scan(&opts))
		assert.Contains(t, opts, want, table)
	}
	require.NoError(t, s.Save(ctx, benchState())) // a few KiB of JSON: compressed
	var lz4 bool
	var method string
	require.NoError(t, s.Pool().QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_settings WHERE name = 'default_toast_compression' AND 'lz4' = ANY(enumvals)),
		coalesce((SELECT pg_column_compression(doc) FROM existence_states), '')`).Scan(&lz4, &method))
	if !lz4 {
		t.Logf("this server has no lz4: the states keep %q", method)
		return
	}
	assert.Equal(t, "lz4", method)
}

// TestRenewInChunks: thousands of leases are renewed in short
// transactions of 512, all of them.
func TestRenewInChunks(t *testing.T) {
	ctx := context.Background()
	s := open(t, pgtest.New(t), "host-a:1", time.Hour)
	var agents []string
	for i := range 1100 {
		agents = append(agents, fmt.Sprintf("agent-%04d", i))
	}
	require.NoError(t, s.Enroll(ctx, agents...))
	ls, err := s.Claim(ctx, 2000)
	require.NoError(t, err)
	require.Len(t, ls, 1100)
	_, err = s.Pool().Exec(ctx, `UPDATE existence_leases SET expires_at = now() + interval '10 minutes'`)
	require.NoError(t, err)
	before := s.Stats()
	lost, err := s.Renew(ctx)
	require.NoError(t, err)
	assert.Empty(t, lost)
	st := s.Stats()
	assert.Equal(t, int64(1100), st.LeasesRenewed-before.LeasesRenewed)
	assert.Equal(t, int64(3), st.RenewRounds-before.RenewRounds, "512 + 512 + 76")
	var live int
	require.NoError(t, s.Pool().QueryRow(ctx, `SELECT count(*) FROM existence_leases WHERE expires_at > now() + interval '59 minutes'`).Scan(&live))
	assert.Equal(t, 1100, live, "every lease extended")
}

// TestEmptyQueueWindow: when a probe finds no open task at all, the Next
// calls of the next 100 ms are answered without a statement; a task
// another process submits meanwhile is claimed once the window has passed,
// and one submitted through the same Store ends the window at once.
func TestEmptyQueueWindow(t *testing.T) {
	ctx := context.Background()
	url := pgtest.New(t)
	clock := &fakeNow{t: time.Now()}
	a, err := pgstore.Open(ctx, url, pgstore.Options{Owner: "host-a:1", TTL: time.Hour, Now: clock.Now})
	require.NoError(t, err)
	t.Cleanup(a.Close)
	b := open(t, url, "host-b:2", time.Hour)
	require.NoError(t, a.Enroll(ctx, "scout"))
	require.Len(t, ids(t, a, 1), 1)
	next := func(what string) *string {
		t.Helper()
		got, err := a.Tasks().Next(ctx, "scout")
		require.NoError(t, err, what)
		if got == nil {
			return nil
		}
		return &got.Description
	}

	assert.Nil(t, next("first"))
	assert.Nil(t, next("within the window"))
	st := a.Stats()
	assert.Equal(t, int64(1), st.ProbeBatches, "one probe")
	assert.Equal(t, int64(1), st.TaskQueueEmpty, "the second Next answered by the first probe's finding")

	_, err = b.Tasks().Submit(ctx, "from another process", "")
	require.NoError(t, err)
	assert.Nil(t, next("another process's task, within the window"))
	clock.Advance(100 * time.Millisecond)
	got := next("after the window")
	require.NotNil(t, got)
	assert.Equal(t, "from another process", *got)
	done, err := a.Tasks().List(ctx)
	require.NoError(t, err)
	_, err = a.Tasks().Finish(ctx, done[0].ID, true, "done")
	require.NoError(t, err)

	assert.Nil(t, next("the queue empty again"))
	_, err = a.Tasks().Submit(ctx, "from this process", "")
	require.NoError(t, err)
	got = next("this process's task, within the window")
	require.NotNil(t, got, "a Submit through the Store ends the window")
	assert.Equal(t, "from this process", *got)
}
