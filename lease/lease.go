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
