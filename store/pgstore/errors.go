package pgstore

import (
	"errors"
	"fmt"
)

// Errors of a [Store]. Match them with errors.Is.
var (
	// ErrConfig: the connection string does not parse.
	ErrConfig = errors.New("pgstore: bad connection string")
	// ErrUnreachable: the server cannot be reached, or refused the login,
	// at start. Open makes one attempt and does not retry.
	ErrUnreachable = errors.New("pgstore: cannot reach the PostgreSQL server at")
	// ErrSchemaTooNew: the database was migrated by a newer version of
	// this package; this version refuses to touch it.
	ErrSchemaTooNew = errors.New("pgstore: database schema is newer than this version")
	// ErrFenced: a write was refused because the writer no longer holds
	// the agent's lease (it expired, or another process took the agent
	// over and the epoch moved on), or because another process holds a
	// live lease on it. Nothing was written. A [*FencedError] says more.
	ErrFenced = errors.New("pgstore: lease lost (fenced)")
	// ErrClosed: a save or a task probe after [Store.Close].
	ErrClosed = errors.New("pgstore: store is closed")
)

// FencedError reports a write refused by fencing: a process that lost its
// lease can never overwrite the new owner's state. It matches
// [ErrFenced] with errors.Is.
type FencedError struct {
	// AgentID is the agent written.
	AgentID string
	// Epoch is the epoch the writer held, or -1 when it held no lease.
	Epoch int64
	// Holder, HolderPID and HolderEpoch name the live lease that holds the
	// agent now, when there is one ("" and 0 otherwise).
	Holder      string
	HolderPID   int
	HolderEpoch int64
}

// Error reads like `pgstore: lease lost (fenced): agent "scout" epoch 3;
// now held by host-b:4242 at epoch 4`.
func (e *FencedError) Error() string {
	held := "no lease"
	if e.Epoch >= 0 {
		held = fmt.Sprintf("epoch %d", e.Epoch)
	}
	now := "the lease expired"
	if e.Holder != "" {
		now = fmt.Sprintf("now held by %s at epoch %d", e.Holder, e.HolderEpoch)
	}
	return fmt.Sprintf("%v: agent %q %s; %s", ErrFenced, e.AgentID, held, now)
}

// Is reports whether target is [ErrFenced].
func (e *FencedError) Is(target error) bool { return target == ErrFenced }
