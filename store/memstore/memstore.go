package memstore

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"

	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/memory"
)

// Store is an in-memory [identity.Store], for tests and for agents that
// need no persistence. It keeps the agents' long-term memories too: it
// embeds a [memory.MemoryStore], so it is a [memory.Store]. The zero value
// is ready to use.
type Store struct {
	mu     sync.RWMutex
	states map[string]*identity.AgentState

	memory.MemoryStore
}

var (
	_ identity.Store = (*Store)(nil)
	_ memory.Store   = (*Store)(nil)
)

// New returns an empty Store.
func New() *Store { return &Store{} }

// Load implements [identity.Store].
func (m *Store) Load(ctx context.Context, agentID string) (*identity.AgentState, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := identity.ValidateID(agentID); err != nil {
		return nil, err
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	s, ok := m.states[agentID]
	if !ok {
		return nil, fmt.Errorf("%w: %s", identity.ErrNotFound, agentID)
	}
	return s.Clone(), nil
}

// Save implements [identity.Store].
func (m *Store) Save(ctx context.Context, s *identity.AgentState) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if s == nil {
		return errors.New("identity: Save of a nil state")
	}
	if err := s.Validate(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.states == nil {
		m.states = map[string]*identity.AgentState{}
	}
	m.states[s.Identity.AgentID] = s.Clone()
	return nil
}

// List implements [identity.Store].
func (m *Store) List(ctx context.Context) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	ids := make([]string, 0, len(m.states))
	for id := range m.states {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids, nil
}
