package lease

import (
	"context"
	"time"
)

// Lease is one agent leased to this process by a [Manager].
type Lease struct {
	// AgentID is the leased agent.
	AgentID string
	// Epoch is the fencing token: it grows by one at every change of
	// owner, and every save and queue operation of the holder is checked
	// against it, so that a holder that lost the lease can never write.
	Epoch int64
	// Owner names the holding process, e.g. "host-a:4242".
	Owner string
	// Expires is when the lease lapses unless renewed.
	Expires time.Time
}

// Manager decides which agents this process runs, when agents are shared
// by many processes (for example through PostgreSQL). A scheduler given a
// Manager claims agents up to its maximum, renews its leases on an
// interval, stops the agents whose lease was lost, and releases every lease
// on a graceful shutdown. Implementations are safe for concurrent use.
type Manager interface {
	// Claim leases up to max agents not held by a live owner, the agent due
	// earliest first, and returns the new leases (possibly none).
	Claim(ctx context.Context, max int) ([]Lease, error)
	// Renew extends every lease this process holds and returns the ids of
	// the agents whose lease was lost (taken over after it expired).
	Renew(ctx context.Context) (lost []string, err error)
	// Release gives up the leases of the given agents at once, so that
	// other processes can take them without waiting for the TTL.
	Release(ctx context.Context, agentIDs ...string) error
}

// LateRenewal is a lease renewed with less than its manager's alarm margin
// left, or found still unrenewed below it (its renewal failed): renewals
// are falling behind, typically because the backend is overloaded, and the
// lease is lost if they fall behind by the rest of Left.
type LateRenewal struct {
	// AgentID and Epoch name the lease.
	AgentID string
	Epoch   int64
	// Left is how much of the lease's time was left when the renewal took
	// effect (Renewed), or when the failed renewal returned (not
	// Renewed), by the manager's clock: the TTL minus the time since the
	// lease was last claimed or renewed.
	Left time.Duration
	// TTL is the lease's time-to-live, and Margin the alarm margin that
	// Left fell under (typically TTL/3).
	TTL, Margin time.Duration
	// Renewed reports whether the renewal succeeded (the lease lasts a
	// full TTL again); false when it failed and the lease runs out after
	// Left unless the next one succeeds.
	Renewed bool
}

// LateReporter is implemented by a [Manager] that measures how much time
// its leases have left when they are renewed, so that renewals falling
// behind are reported before a lease is lost. A scheduler calls
// LateRenewals after each [Manager.Renew].
type LateReporter interface {
	// LateRenewals returns the late renewals since the previous call (the
	// latest one per agent) and forgets them.
	LateRenewals() []LateRenewal
}
