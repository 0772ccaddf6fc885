package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/existence-loop/sdk/identity"
)

// Lock implements [identity.Locker]: it takes agentID's lease row in the
// locks table, so that one process at a time runs the agent ("one process
// per agent"). The row names the holder ("host:pid:token"); the store
// renews it every Options.LeaseTTL/3 while it is open. A row whose lease
// lapsed, or whose holder was a process of this host that no longer
// exists (killed), is taken over, and the take-over is logged. unlock
// deletes the row (once; later calls return nil); [Store.Close] releases
// every lock the store holds.
//
// Errors: [identity.ErrInvalidID]; a [*identity.LockedError] (matching
// [identity.ErrLocked]) with the holder's pid and name while another
// process, another Store of this process, or an earlier Lock of this store
// holds the agent; [ErrClosed]; a database error.
func (s *Store) Lock(agentID string) (unlock func() error, err error) {
	if err := identity.ValidateID(agentID); err != nil {
		return nil, err
	}
	if s.isClosed() {
		return nil, ErrClosed
	}
	ctx := context.Background()
	tx, err := s.wdb.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("sqlitestore: lock %s: %w", s.rowName(agentID), err)
	}
	defer tx.Rollback()
	now := s.opts.Now().UTC()
	var (
		holder, host, expires string
		pid                   int
	)
	err = tx.QueryRowContext(ctx, "SELECT holder, host, pid, expires FROM locks WHERE agent_id = ?", agentID).Scan(&holder, &host, &pid, &expires)
	switch {
	case errors.Is(err, sql.ErrNoRows):
	case err != nil:
		return nil, fmt.Errorf("sqlitestore: lock %s: %w", s.rowName(agentID), err)
	default:
		exp, perr := time.Parse(time.RFC3339Nano, expires)
		lapsed := perr == nil && !exp.After(now)
		dead := host == s.host && pid != os.Getpid() && !processAlive(pid)
		if !lapsed && !dead {
			return nil, &identity.LockedError{AgentID: agentID, Path: s.path, PID: pid, Holder: holder}
		}
		why := "its lease lapsed at " + expires
		if dead {
			why = fmt.Sprintf("process %d no longer exists", pid)
		}
		s.log.Info("sqlitestore: taking over a lock", "agent", agentID, "db", s.path, "previous_holder", holder, "reason", why)
	}
	_, err = tx.ExecContext(ctx, `INSERT OR REPLACE INTO locks (agent_id, holder, host, pid, acquired, expires) VALUES (?, ?, ?, ?, ?, ?)`,
		agentID, s.holder, s.host, os.Getpid(), now.Format(time.RFC3339Nano), now.Add(s.opts.LeaseTTL).Format(time.RFC3339Nano))
	if err != nil {
		return nil, fmt.Errorf("sqlitestore: lock %s: %w", s.rowName(agentID), err)
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("sqlitestore: lock %s: %w", s.rowName(agentID), err)
	}
	s.mu.Lock()
	s.held[agentID] = true
	s.mu.Unlock()
	return sync.OnceValue(func() error {
		s.mu.Lock()
		delete(s.held, agentID)
		s.mu.Unlock()
		if s.isClosed() {
			return nil // Close released it
		}
		if _, err := s.wdb.Exec("DELETE FROM locks WHERE agent_id = ? AND holder = ?", agentID, s.holder); err != nil {
			return fmt.Errorf("sqlitestore: unlock %s: %w", s.rowName(agentID), err)
		}
		return nil
	}), nil
}
