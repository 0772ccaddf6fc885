package lease_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/existence-loop/sdk/lease"
)

// table is the lease table that processes share: one lease per agent, as
// store/pgstore keeps one row per agent. Owner "" means free.
type table struct {
	mu     sync.Mutex
	now    time.Time // the table's clock, moved by hand in the example
	ttl    time.Duration
	leases map[string]lease.Lease
}

// manager is a tiny in-memory lease.Manager: one process's view of the table.
type manager struct {
	t     *table
	owner string
	held  map[string]int64 // agent → epoch of the lease this process holds
}

var _ lease.Manager = (*manager)(nil)

func (m *manager) Claim(_ context.Context, max int) ([]lease.Lease, error) {
	m.t.mu.Lock()
	defer m.t.mu.Unlock()
	var got []lease.Lease
	for _, id := range slices.Sorted(maps.Keys(m.t.leases)) {
		l := m.t.leases[id]
		if len(got) == max || m.held[id] != 0 || (l.Owner != "" && m.t.now.Before(l.Expires)) {
			continue // full, already ours, or held by a live owner
		}
		l = lease.Lease{AgentID: id, Epoch: l.Epoch + 1, Owner: m.owner, Expires: m.t.now.Add(m.t.ttl)}
		m.t.leases[id], m.held[id] = l, l.Epoch
		got = append(got, l)
	}
	return got, nil
}

func (m *manager) Renew(context.Context) (lost []string, err error) {
	m.t.mu.Lock()
	defer m.t.mu.Unlock()
	for _, id := range slices.Sorted(maps.Keys(m.held)) {
		l := m.t.leases[id]
		if l.Epoch != m.held[id] { // taken over: the fencing token moved on
			lost = append(lost, id)
			delete(m.held, id)
			continue
		}
		l.Expires = m.t.now.Add(m.t.ttl)
		m.t.leases[id] = l
	}
	return lost, nil
}

func (m *manager) Release(_ context.Context, agentIDs ...string) error {
	m.t.mu.Lock()
	defer m.t.mu.Unlock()
	for _, id := range agentIDs {
		if l := m.t.leases[id]; m.held[id] != 0 && l.Epoch == m.held[id] {
			m.t.leases[id] = lease.Lease{AgentID: id, Epoch: l.Epoch}
		}
		delete(m.held, id)
	}
	return nil
}

// Two processes share three agents through a Manager. A process that pauses
// past the TTL loses its agents to the other, under a new epoch (the fencing
// token its stale writes are checked against); a graceful shutdown releases
// them at once.
func ExampleManager() {
	ctx := context.Background()
	t := &table{now: time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC), ttl: 30 * time.Second,
		leases: map[string]lease.Lease{"scout": {}, "vault": {}, "weaver": {}}}
	a := &manager{t: t, owner: "host-a:4242", held: map[string]int64{}}
	b := &manager{t: t, owner: "host-b:17", held: map[string]int64{}}
	show := func(who string, ls []lease.Lease) {
		for _, l := range ls {
			fmt.Printf("%s claims %s (epoch %d, until %s)\n", who, l.AgentID, l.Epoch, l.Expires.Format(time.TimeOnly))
		}
	}

	got, _ := a.Claim(ctx, 2)
	show("a", got)
	got, _ = b.Claim(ctx, 10)
	show("b", got)

	t.now = t.now.Add(time.Minute) // a pauses; b keeps renewing
	b.Renew(ctx)
	got, _ = b.Claim(ctx, 10)
	show("b", got)
	lost, _ := a.Renew(ctx)
	fmt.Println("a lost", lost)

	b.Release(ctx, "scout", "vault", "weaver") // b shuts down
	got, _ = a.Claim(ctx, 10)
	show("a", got)
	// Output:
	// a claims scout (epoch 1, until 12:00:30)
	// a claims vault (epoch 1, until 12:00:30)
	// b claims weaver (epoch 1, until 12:00:30)
	// b claims scout (epoch 2, until 12:01:30)
	// b claims vault (epoch 2, until 12:01:30)
	// a lost [scout vault]
	// a claims scout (epoch 3, until 12:01:30)
	// a claims vault (epoch 3, until 12:01:30)
	// a claims weaver (epoch 2, until 12:01:30)
}
