package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/existence-loop/sdk/cmd/internal/storespec"
	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/lease"
	"github.com/existence-loop/sdk/store/memstore"
	"github.com/existence-loop/sdk/store/pgstore"
	"github.com/existence-loop/sdk/task"
)

// swarmStoreKind returns the kind of the -store value: "memory", or the
// storespec kind ("dir", "sqlite", "postgres"). Errors: storespec.ErrSpec.
func swarmStoreKind(spec string) (string, error) {
	if spec == "memory" {
		return "memory", nil
	}
	return storespec.Kind(spec)
}

// swarmStore is the store a run uses.
type swarmStore struct {
	kind   string
	store  identity.Store // shared by the agents (nil with leases)
	tasks  task.Queue     // the store's task queue; nil for memory
	pg     *pgstore.Store // with -store postgres://...
	closer io.Closer
}

// openSwarmStore opens the -store spec.
func openSwarmStore(ctx context.Context, spec string, log *slog.Logger) (*swarmStore, error) {
	kind, err := swarmStoreKind(spec)
	if err != nil {
		return nil, err
	}
	if kind == "memory" {
		return &swarmStore{kind: kind, store: memstore.New(), closer: io.NopCloser(nil)}, nil
	}
	s, tasks, closer, err := storespec.Open(ctx, spec, storespec.Options{Logger: log})
	if err != nil {
		return nil, err
	}
	o := &swarmStore{kind: kind, store: s, tasks: tasks, closer: closer}
	if _, ok := storespec.Leases(s); ok {
		pg, ok := s.(*pgstore.Store)
		if !ok {
			closer.Close()
			return nil, fmt.Errorf("swarm: a %T hands agents out between processes, which the swarm runs only on PostgreSQL", s)
		}
		o.pg = pg
	}
	return o, nil
}

// saveStats counts the saves of every agent (one counter for the run).
type saveStats struct {
	saves, errors atomic.Int64
	// cancelled are the saves cut short by the stop (their context
	// ended; the shutdown saves the agent again).
	cancelled atomic.Int64
	mu        sync.Mutex
	latency   []time.Duration
}

func (s *saveStats) record(ctx context.Context, d time.Duration, err error) {
	s.saves.Add(1)
	switch {
	case err == nil:
	case ctx.Err() != nil && errors.Is(err, ctx.Err()):
		s.cancelled.Add(1)
	default:
		s.errors.Add(1)
	}
	s.mu.Lock()
	s.latency = append(s.latency, d)
	s.mu.Unlock()
}

func (s *saveStats) quantiles() quantiles {
	s.mu.Lock()
	defer s.mu.Unlock()
	return quantilesOf(slices.Clone(s.latency))
}

// countingStore counts and times the Save calls of the store it wraps. It
// passes identity.Locker and identity.Quarantiner through: Lock does
// nothing when the wrapped store takes no locks (as a pgstore.Fenced,
// whose lease is the lock), and Quarantine is refused when it cannot.
type countingStore struct {
	identity.Store
	stats *saveStats
}

func (c countingStore) Save(ctx context.Context, st *identity.AgentState) error {
	t0 := time.Now()
	err := c.Store.Save(ctx, st)
	c.stats.record(ctx, time.Since(t0), err)
	return err
}

func (c countingStore) Lock(agentID string) (func() error, error) {
	if l, ok := c.Store.(identity.Locker); ok {
		return l.Lock(agentID)
	}
	return func() error { return nil }, nil
}

func (c countingStore) Quarantine(agentID string) (string, error) {
	if q, ok := c.Store.(identity.Quarantiner); ok {
		return q.Quarantine(agentID)
	}
	return "", fmt.Errorf("swarm: %T cannot quarantine %q", c.Store, agentID)
}

// countingLeases counts the leases a runner claims, loses and releases.
type countingLeases struct {
	lease.Manager
	claimed, lost, released atomic.Int64
	rounds                  atomic.Int64 // Claim calls that returned
}

func (c *countingLeases) Claim(ctx context.Context, max int) ([]lease.Lease, error) {
	ls, err := c.Manager.Claim(ctx, max)
	c.claimed.Add(int64(len(ls)))
	c.rounds.Add(1)
	return ls, err
}

// adopted reports whether the runner has taken up every lease claimed so
// far, after at least one claim: each is held by r or was released.
func (c *countingLeases) adopted(held int) bool {
	return c.rounds.Load() > 0 && int64(held)+c.released.Load() >= c.claimed.Load()
}

func (c *countingLeases) Renew(ctx context.Context) ([]string, error) {
	lost, err := c.Manager.Renew(ctx)
	c.lost.Add(int64(len(lost)))
	return lost, err
}

func (c *countingLeases) Release(ctx context.Context, agentIDs ...string) error {
	err := c.Manager.Release(ctx, agentIDs...)
	if err == nil {
		c.released.Add(int64(len(agentIDs)))
	}
	return err
}

var (
	_ identity.Locker      = countingStore{}
	_ identity.Quarantiner = countingStore{}
	_ lease.Manager        = (*countingLeases)(nil)
)
