package pgstore

import (
	"context"

	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/lease"
)

// Fenced is the view of a [Store] bound to one claimed lease: its writes
// for the lease's agent are checked against the lease's epoch, so that an
// agent object left over from an earlier lease (dropped, then the agent
// claimed again under a newer epoch) can never write either. It is what a
// Runner's NewAgent gives each agent:
//
//	NewAgent: func(ctx context.Context, l lease.Lease) (existence.Config, error) {
//		f := store.Fenced(l)
//		return existence.Config{ID: l.AgentID, Name: name(l.AgentID), Model: m, Store: f, Tasks: f.Tasks()}, nil
//	}
//
// Fenced is not an [identity.Locker]: the lease is the lock.
type Fenced struct {
	s     *Store
	lease lease.Lease
}

var _ identity.Store = (*Fenced)(nil)

// Fenced returns the view of s bound to lease l (as returned by
// [Store.Claim]).
func (s *Store) Fenced(l lease.Lease) *Fenced { return &Fenced{s: s, lease: l} }

// Lease returns the lease the view is bound to.
func (f *Fenced) Lease() lease.Lease { return f.lease }

// Load implements [identity.Store] (see [Store.Load]).
func (f *Fenced) Load(ctx context.Context, agentID string) (*identity.AgentState, error) {
	return f.s.Load(ctx, agentID)
}

// Save implements [identity.Store]: as [Store.Save], with the lease's
// agent checked against the lease's epoch. Errors: a [*FencedError]
// (matching [ErrFenced]) once the lease is lost, released, or replaced by
// a newer one of this Store; the errors of [Store.Save].
func (f *Fenced) Save(ctx context.Context, st *identity.AgentState) error {
	want := int64(-1)
	if st != nil && st.Identity.AgentID == f.lease.AgentID {
		want = f.lease.Epoch
	}
	return f.s.save(ctx, st, want)
}

// List implements [identity.Store] (see [Store.List]).
func (f *Fenced) List(ctx context.Context) ([]string, error) { return f.s.List(ctx) }

// Tasks returns the task queue with the lease's agent checked against the
// lease's epoch.
func (f *Fenced) Tasks() *Queue {
	return &Queue{s: f.s, agent: f.lease.AgentID, epoch: f.lease.Epoch}
}
