package pgstore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/lease"
)

// Enroll adds agents to the population that [Store.Claim] leases, without
// a stored state (a process that claims one starts a fresh identity).
// Saving an agent's state enrolls it too. Errors: [identity.ErrInvalidID];
// the database's error.
func (s *Store) Enroll(ctx context.Context, agentIDs ...string) error {
	for _, id := range agentIDs {
		if err := identity.ValidateID(id); err != nil {
			return err
		}
	}
	_, err := s.pool.Exec(ctx, `INSERT INTO existence_leases (agent_id) SELECT unnest($1::text[]) ON CONFLICT DO NOTHING`, agentIDs)
	if err != nil {
		return fmt.Errorf("pgstore: enroll: %w", err)
	}
	for _, id := range agentIDs {
		s.enrolled.Store(id, true)
	}
	return nil
}

// claimSQL leases up to $1 agents that no live owner holds, the one whose
// state was saved longest ago (never saved first) first. SKIP LOCKED lets
// processes claim at the same time without waiting for each other.
const claimSQL = `
WITH c AS (
	SELECT l.agent_id FROM existence_leases l LEFT JOIN existence_states s USING (agent_id)
	WHERE l.owner IS NULL OR l.expires_at <= now()
	ORDER BY s.updated_at NULLS FIRST, l.agent_id
	LIMIT $1
	FOR UPDATE OF l SKIP LOCKED
)
UPDATE existence_leases l
SET epoch = l.epoch + 1, owner = $2, host = $3, pid = $4, acquired_at = now(),
    expires_at = now() + make_interval(secs => $5)
FROM c WHERE l.agent_id = c.agent_id
RETURNING l.agent_id, l.epoch, l.owner, l.expires_at`

// Claim implements [lease.Manager]: it leases up to max agents not held
// by a live owner (never leased, released, or whose lease expired), the
// agent due earliest first (the one whose state was saved longest ago,
// never-saved agents first). Each claim moves the agent's epoch on by one,
// which fences out the previous holder. The leases last Options.TTL unless
// renewed. At most Options.ClaimBatch are claimed per call when it is
// set. Claims run on the connections reserved for the leases, never
// behind the saves. Errors: the database's error (nothing is claimed
// then).
func (s *Store) Claim(ctx context.Context, max int) ([]lease.Lease, error) {
	if b := s.opts.ClaimBatch; b > 0 && max > b {
		max = b
	}
	if max <= 0 {
		return nil, nil
	}
	ctx, cancel := context.WithTimeout(ctx, s.opts.TTL/2)
	defer cancel()
	start := s.opts.Now()
	rows, err := s.lpool.Query(ctx, claimSQL, max, s.owner, s.host, s.pid, s.opts.TTL.Seconds())
	if err != nil {
		return nil, fmt.Errorf("pgstore: claim: %w", err)
	}
	var out []lease.Lease
	for rows.Next() {
		var l lease.Lease
		if err := rows.Scan(&l.AgentID, &l.Epoch, &l.Owner, &l.Expires); err != nil {
			rows.Close()
			return nil, fmt.Errorf("pgstore: claim: %w", err)
		}
		out = append(out, l)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("pgstore: claim: %w", err)
	}
	s.mu.Lock()
	for _, l := range out {
		if old := s.held[l.AgentID]; old != nil && old.stop != nil {
			close(old.stop)
		}
		s.held[l.AgentID] = &held{epoch: l.Epoch, deadline: start.Add(s.opts.TTL)}
		delete(s.late, l.AgentID)
		s.enrolled.Store(l.AgentID, true)
	}
	s.mu.Unlock()
	s.count.claimed.Add(int64(len(out)))
	return out, nil
}

// renewSQL extends the leases given as (agent id, epoch) pairs that are
// still live at that epoch, and returns the ids extended. The rows are
// locked in agent id order, as the group commit's fence locks them, so
// that a renewal and a batch of saves cannot deadlock.
const renewSQL = `
WITH c AS (
	SELECT l.agent_id FROM existence_leases l
	JOIN unnest($1::text[], $2::bigint[]) AS h(agent_id, epoch) ON h.agent_id = l.agent_id
	WHERE l.epoch = h.epoch AND l.owner IS NOT NULL AND l.expires_at > now()
	ORDER BY l.agent_id
	FOR NO KEY UPDATE OF l
)
UPDATE existence_leases l SET expires_at = now() + make_interval(secs => $3)
FROM c WHERE l.agent_id = c.agent_id
RETURNING l.agent_id`

// Renew implements [lease.Manager]: it extends every lease this Store
// holds by Options.TTL and returns the ids of the agents whose lease was
// lost: taken over by another process, expired, or found lost by a fenced
// write. Writes for a lost agent fail with [ErrFenced] until it is
// released and claimed again; Renew returns it every time until then.
//
// Renewals run on the connections reserved for the leases, so a load of
// saves never keeps them waiting for a connection; a deadlock with a
// group commit (the server rolled the renewal back) is retried twice. The
// leases are renewed 512 at a time, each chunk a short transaction of
// its own, so that a save fenced on a lease being renewed waits for one
// chunk at most.
// Each renewal measures the time its lease had left ([Stats].MarginP1):
// one under Options.LateMargin is late, counted in [Stats].LeasesLate and
// returned by [Store.LateRenewals].
//
// Claim and Renew give up after TTL/2, so that a lost connection cannot
// hold them past the leases. When the database cannot be reached, Renew
// returns its error together with the agents whose lease has run out by
// this process's own clock (TTL after the last claim or renewal was sent),
// so that a partitioned process stops them without waiting for the
// database; the leases it leaves under Options.LateMargin are late.
func (s *Store) Renew(ctx context.Context) (lost []string, err error) {
	s.mu.Lock()
	var ids []string
	epochs := map[string]int64{}
	for id, h := range s.held {
		if !h.lost {
			ids = append(ids, id)
			epochs[id] = h.epoch
		}
	}
	s.mu.Unlock()
	slices.Sort(ids)
	ctx, cancel := context.WithTimeout(ctx, s.opts.TTL/2)
	defer cancel()
	for len(ids) > 0 && err == nil {
		chunk := ids[:min(len(ids), renewChunk)]
		ids = ids[len(chunk):]
		err = s.renewChunk(ctx, chunk, epochs)
	}
	if err != nil {
		// The leases not renewed: late, or lost by this process's clock.
		now := s.opts.Now()
		s.mu.Lock()
		for _, id := range ids {
			if h := s.held[id]; h != nil && h.epoch == epochs[id] && !h.lost {
				left := h.deadline.Sub(now)
				switch {
				case left < 0:
					s.loseLocked(h)
				case left < s.opts.LateMargin:
					s.lateLocked(id, h, left, false)
				}
			}
		}
		s.mu.Unlock()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for id, h := range s.held {
		if h.lost && !h.released {
			lost = append(lost, id)
		}
	}
	return lost, err
}

// renewChunk is the size of one renewal statement: a renewal locks its
// leases' rows until it commits, and a save fenced on one of them waits
// for it, so thousands of leases are renewed in several short
// transactions rather than one long one.
const renewChunk = 512

// renewChunk renews the leases of ids (sorted, at most renewChunk) held
// at epochs, and records for each whether it was renewed, late or lost.
// It returns the database's error, after marking the chunk's leases late
// or lost as their time left says.
func (s *Store) renewChunk(ctx context.Context, ids []string, epochs map[string]int64) error {
	eps := make([]int64, len(ids))
	for i, id := range ids {
		eps[i] = epochs[id]
	}
	start := s.opts.Now()
	renewed, err := s.renew(ctx, ids, eps)
	now := s.opts.Now()
	ok := make(map[string]bool, len(renewed))
	for _, id := range renewed {
		ok[id] = true
	}
	margins := make([]time.Duration, 0, len(renewed))
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, id := range ids {
		h := s.held[id]
		if h == nil || h.epoch != eps[i] {
			continue // released or claimed again meanwhile
		}
		left := h.deadline.Sub(now)
		switch {
		case ok[id]:
			margins = append(margins, left)
			if left < s.opts.LateMargin {
				s.lateLocked(id, h, left, true)
			}
			h.deadline = start.Add(s.opts.TTL)
		case err == nil || left < 0:
			s.loseLocked(h)
		case left < s.opts.LateMargin:
			s.lateLocked(id, h, left, false)
		}
	}
	s.count.renewed.Add(int64(len(margins)))
	s.margins.add(now, margins...)
	return err
}

// renew runs renewSQL on the lease connections, retrying a deadlock.
func (s *Store) renew(ctx context.Context, ids []string, epochs []int64) ([]string, error) {
	var renewed []string
	var err error
	for attempt := 0; attempt < 3; attempt++ {
		var rows pgx.Rows
		rows, err = s.lpool.Query(ctx, renewSQL, ids, epochs, s.opts.TTL.Seconds())
		if err == nil {
			renewed, err = pgx.CollectRows(rows, pgx.RowTo[string])
		}
		if !retryable(err) {
			break
		}
	}
	s.count.renewRounds.Add(1)
	if err != nil {
		return nil, fmt.Errorf("pgstore: renew: %w", err)
	}
	return renewed, nil
}

// lateLocked records a late renewal of h; s.mu must be held.
func (s *Store) lateLocked(id string, h *held, left time.Duration, renewed bool) {
	s.count.late.Add(1)
	s.late[id] = lease.LateRenewal{AgentID: id, Epoch: h.epoch, Left: left, TTL: s.opts.TTL, Margin: s.opts.LateMargin, Renewed: renewed}
}

// LateRenewals implements [lease.LateReporter]: the renewals since the
// previous call that found less than Options.LateMargin of their lease's
// TTL left, or that failed with the lease under it (the latest one per
// agent, in no particular order), which it then forgets. An
// runner.Runner reports each as a lease_late event of its agent.
func (s *Store) LateRenewals() []lease.LateRenewal {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.late) == 0 {
		return nil
	}
	out := make([]lease.LateRenewal, 0, len(s.late))
	for _, l := range s.late {
		out = append(out, l)
	}
	clear(s.late)
	return out
}

// Release implements [lease.Manager]: it gives up the leases of the
// given agents at once (keeping their epochs), so that other processes can
// claim them without waiting for the TTL. Afterwards this Store refuses
// writes for them with [ErrFenced] until it claims them again. Agents it
// does not hold are ignored. Errors: the database's error (the leases then
// lapse after the TTL).
func (s *Store) Release(ctx context.Context, agentIDs ...string) error {
	var ids []string
	var epochs []int64
	s.mu.Lock()
	for _, id := range agentIDs {
		if h := s.held[id]; h != nil && !h.released {
			ids, epochs = append(ids, id), append(epochs, h.epoch)
			h.lost, h.released = true, true
			delete(s.late, id)
			if h.stop != nil {
				close(h.stop)
				h.stop = nil
			}
		}
	}
	s.mu.Unlock()
	if len(ids) == 0 {
		return nil
	}
	_, err := s.lpool.Exec(ctx, `
		WITH c AS (
			SELECT l.agent_id FROM existence_leases l
			JOIN unnest($1::text[], $2::bigint[]) AS h(agent_id, epoch) ON h.agent_id = l.agent_id AND h.epoch = l.epoch
			ORDER BY l.agent_id
			FOR NO KEY UPDATE OF l
		)
		UPDATE existence_leases l SET owner = NULL, host = NULL, pid = NULL, expires_at = '-infinity'
		FROM c WHERE l.agent_id = c.agent_id`, ids, epochs)
	if err != nil {
		return fmt.Errorf("pgstore: release: %w", err)
	}
	return nil
}

// Held returns the live lease this Store holds on agentID (as claimed),
// and whether it holds one.
func (s *Store) Held(agentID string) (lease.Lease, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	h := s.held[agentID]
	if h == nil || h.lost {
		return lease.Lease{}, false
	}
	return lease.Lease{AgentID: agentID, Epoch: h.epoch, Owner: s.owner, Expires: h.deadline}, true
}

// Lock implements [identity.Locker] through leases, for programs that run
// one agent at a time (an existence.Agent takes it in New). When this
// Store already holds agentID's lease through [Store.Claim], Lock returns
// an unlock that does nothing (the claimer releases it). Otherwise it
// leases the agent itself, renews the lease every TTL/3 until unlock, and
// unlock releases it. Errors: [identity.ErrInvalidID]; a
// [*identity.LockedError] (matching [identity.ErrLocked]) when a live
// lease of another process holds the agent, or Lock was already called in
// this Store; the database's error.
func (s *Store) Lock(agentID string) (unlock func() error, err error) {
	if err := identity.ValidateID(agentID); err != nil {
		return nil, err
	}
	s.mu.Lock()
	if h := s.held[agentID]; h != nil && !h.lost {
		defer s.mu.Unlock()
		if h.locked {
			return nil, &identity.LockedError{AgentID: agentID, Path: "postgres:leases/" + agentID + " (held by " + s.owner + ")", PID: s.pid}
		}
		h.locked = true
		return func() error {
			s.mu.Lock()
			h.locked = false
			s.mu.Unlock()
			return nil
		}, nil
	}
	s.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), s.opts.ConnectTimeout)
	defer cancel()
	if err := s.ensureAgent(ctx, agentID); err != nil {
		return nil, err
	}
	start := s.opts.Now()
	var epoch int64
	err = s.lpool.QueryRow(ctx, `
		UPDATE existence_leases SET epoch = epoch + 1, owner = $2, host = $3, pid = $4, acquired_at = now(),
		       expires_at = now() + make_interval(secs => $5)
		WHERE agent_id = $1 AND (owner IS NULL OR expires_at <= now())
		RETURNING epoch`, agentID, s.owner, s.host, s.pid, s.opts.TTL.Seconds()).Scan(&epoch)
	if errors.Is(err, pgx.ErrNoRows) {
		var owner string
		var pid int32
		if err := s.pool.QueryRow(ctx, `SELECT coalesce(owner, ''), coalesce(pid, 0) FROM existence_leases WHERE agent_id = $1`, agentID).Scan(&owner, &pid); err != nil {
			owner = "another process (" + err.Error() + ")"
		}
		return nil, &identity.LockedError{AgentID: agentID, Path: "postgres:leases/" + agentID + " (held by " + owner + ")", PID: int(pid)}
	}
	if err != nil {
		return nil, fmt.Errorf("pgstore: lock %s: %w", agentID, err)
	}
	h := &held{epoch: epoch, locked: true, deadline: start.Add(s.opts.TTL), stop: make(chan struct{})}
	s.mu.Lock()
	s.held[agentID] = h
	s.mu.Unlock()
	s.count.claimed.Add(1)
	go s.renewLoop(agentID, h)
	unlocked := false
	return func() error {
		s.mu.Lock()
		if unlocked {
			s.mu.Unlock()
			return nil
		}
		unlocked = true
		s.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), s.opts.ConnectTimeout)
		defer cancel()
		return s.Release(ctx, agentID)
	}, nil
}

// renewLoop renews the lease Lock took every TTL/3 until it is released or
// lost, on the lease connections, measuring its margin as Renew does.
func (s *Store) renewLoop(agentID string, h *held) {
	t := time.NewTicker(s.opts.TTL / 3)
	defer t.Stop()
	s.mu.Lock()
	stop := h.stop
	s.mu.Unlock()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), s.opts.TTL/3)
		start := s.opts.Now()
		renewed, err := s.renew(ctx, []string{agentID}, []int64{h.epoch})
		cancel()
		now := s.opts.Now()
		s.mu.Lock()
		left := h.deadline.Sub(now)
		switch {
		case err == nil && len(renewed) == 1:
			s.count.renewed.Add(1)
			s.margins.add(now, left)
			if left < s.opts.LateMargin {
				s.lateLocked(agentID, h, left, true)
			}
			h.deadline = start.Add(s.opts.TTL)
		case err == nil || now.After(h.deadline):
			s.loseLocked(h)
			s.opts.Logger.Warn("pgstore: lease lost", "agent", agentID, "epoch", h.epoch, "err", err)
			s.mu.Unlock()
			return
		case left < s.opts.LateMargin:
			s.lateLocked(agentID, h, left, false)
		}
		s.mu.Unlock()
	}
}

// LeaseInfo is one row of the leases view: who holds which agent.
type LeaseInfo struct {
	AgentID string
	// Owner, Host and PID name the holding process; "" and 0 when none.
	Owner string
	Host  string
	PID   int
	// Epoch is the fencing token of the current (or last) lease.
	Epoch int64
	// Acquired and Expires bound the lease; Live reports whether it is
	// held now (an owner and Expires in the future, by the database's
	// clock).
	Acquired time.Time
	Expires  time.Time
	Live     bool
	// Saved is when the agent's state was last saved (zero if never).
	Saved time.Time
}

// Leases returns the leases view (every enrolled agent, whether held or
// not), ordered by agent id. The same rows are in the database as the
// view "leases", for psql: SELECT * FROM leases WHERE live.
func (s *Store) Leases(ctx context.Context) ([]LeaseInfo, error) {
	rows, err := s.pool.Query(ctx, `SELECT agent_id, coalesce(owner, ''), coalesce(host, ''), coalesce(pid, 0), epoch,
		acquired_at, expires_at, live, saved_at
		FROM leases ORDER BY agent_id COLLATE "C"`)
	if err != nil {
		return nil, fmt.Errorf("pgstore: leases: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (LeaseInfo, error) {
		var l LeaseInfo
		var pid int32
		var acq, exp, saved pgtype.Timestamptz
		err := r.Scan(&l.AgentID, &l.Owner, &l.Host, &pid, &l.Epoch, &acq, &exp, &l.Live, &saved)
		l.PID, l.Acquired, l.Expires, l.Saved = int(pid), finite(acq), finite(exp), finite(saved)
		return l, err
	})
	if err != nil {
		return nil, fmt.Errorf("pgstore: leases: %w", err)
	}
	return out, nil
}

// finite returns t's time, or the zero time for NULL and ±infinity.
func finite(t pgtype.Timestamptz) time.Time {
	if !t.Valid || t.InfinityModifier != pgtype.Finite {
		return time.Time{}
	}
	return t.Time
}
