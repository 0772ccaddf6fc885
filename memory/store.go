package memory

import (
	"cmp"
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"
)

// Store keeps agents' memories. Every store of the SDK implements it
// besides identity.Store: store/memstore, store/filestore,
// store/sqlitestore and store/pgstore (without pgvector), and
// [MemoryStore] here; all pass the conformance suite
// store/storetest.RunMemory. Implementations are safe for concurrent
// use; records go in and come out as copies.
//
// A [Memory] is the one writer of an agent's memories while it runs it
// (the process holding the agent's lock or lease) and caches them; a
// store needs no index but the ones below.
type Store interface {
	// AddMemory stores r, which must [Record.Validate]. When the agent
	// already has a memory with exactly the same Text, no second one is
	// stored: that memory's AccessCount is raised by one, its LastAccess
	// becomes r.LastAccess if later, its Importance the larger of both,
	// Important is set if either is, and if it was pending and r has a
	// vector it takes r's vector, model and dimensions; it takes r's Fact
	// when it had none ([Merge]). AddMemory returns
	// the memory as stored and whether it was such a duplicate. Errors:
	// [ErrInvalid] for a record that does not validate; a second memory of
	// the agent with r's ID (and another text) is refused with an error
	// wrapping [ErrInvalid] too.
	AddMemory(ctx context.Context, r Record) (stored Record, dup bool, err error)
	// UpdateMemories replaces, for each record of agentID given (matched
	// by ID), Kind, Importance, Important, LastAccess, AccessCount and
	// SupersededBy; the text, the fact, the creation time and the vector
	// stay. Records that do not
	// exist (forgotten meanwhile) are skipped; records whose fields do not
	// validate ([CheckUpdate]) are refused with [ErrInvalid] before
	// anything changes.
	UpdateMemories(ctx context.Context, agentID string, recs []Record) error
	// SetVectors replaces, for each record of agentID given (matched by
	// ID), Model, Dimensions and Vector: a backfill embedding pending
	// memories, or a reembed moving them to a new space. A record with no
	// vector makes the memory pending. Unknown ids are skipped; invalid
	// vectors are refused with [ErrInvalid] before anything changes.
	SetVectors(ctx context.Context, agentID string, recs []Record) error
	// DeleteMemories deletes the agent's memories with these ids and
	// returns how many existed. Unknown ids are not an error.
	DeleteMemories(ctx context.Context, agentID string, ids []string) (int, error)
	// Memories returns every memory of agentID, oldest first (by Created,
	// then ID); an empty slice, not an error, for an agent with none.
	Memories(ctx context.Context, agentID string) ([]Record, error)
	// CountMemories counts the agent's memories without reading them:
	// how many, how many have a vector, by embedding space.
	CountMemories(ctx context.Context, agentID string) (Counts, error)
}

// Counts are an agent's memories as a store counts them.
type Counts struct {
	// Memories is how many the agent has; Pending how many have no
	// vector.
	Memories int `json:"memories"`
	Pending  int `json:"pending"`
	// Spaces counts the memories with a vector by embedding space, the
	// most common first (then by model name). More than one space means
	// a reembed was interrupted.
	Spaces []SpaceCount `json:"spaces,omitempty"`
}

// SpaceCount is how many memories have a vector of one space.
type SpaceCount struct {
	// Space is the embedding space.
	Space
	// Count is how many memories have a vector in it.
	Count int `json:"count"`
}

// SortSpaces orders space counts as [Counts].Spaces wants them: the most
// common first, then by model name and dimensions.
func SortSpaces(s []SpaceCount) {
	slices.SortFunc(s, func(a, b SpaceCount) int {
		if c := cmp.Compare(b.Count, a.Count); c != 0 {
			return c
		}
		if c := cmp.Compare(a.Model, b.Model); c != 0 {
			return c
		}
		return cmp.Compare(a.Dimensions, b.Dimensions)
	})
}

// CountRecords counts recs as [Store.CountMemories] does; stores that read
// whole records use it.
func CountRecords(recs []Record) Counts {
	c := Counts{Memories: len(recs)}
	by := map[Space]int{}
	for i := range recs {
		if recs[i].Pending() {
			c.Pending++
			continue
		}
		by[recs[i].Space()]++
	}
	for s, n := range by {
		c.Spaces = append(c.Spaces, SpaceCount{Space: s, Count: n})
	}
	SortSpaces(c.Spaces)
	return c
}

// CompareRecords orders records as [Store.Memories] returns them: by
// Created, then by ID.
func CompareRecords(a, b *Record) int {
	if c := a.Created.Compare(b.Created); c != 0 {
		return c
	}
	return cmp.Compare(a.ID, b.ID)
}

// Merge applies the duplicate rule of [Store.AddMemory]: it returns old
// after a second store of the same text as r.
func Merge(old, r Record) Record {
	old.AccessCount++
	if r.LastAccess.After(old.LastAccess) {
		old.LastAccess = r.LastAccess
	}
	old.Importance = max(old.Importance, r.Importance)
	old.Important = old.Important || r.Important
	if old.Fact == "" {
		old.Fact = r.Fact
	}
	if old.Pending() && !r.Pending() {
		old.Model, old.Dimensions, old.Vector = r.Model, r.Dimensions, append([]float32(nil), r.Vector...)
	}
	return old
}

// EncodeVector returns v as little-endian IEEE 754 float32 bytes, 4 per
// dimension: how the SQL stores keep vectors (BLOB, bytea) and the file
// store encodes them (base64). Nil gives nil.
func EncodeVector(v []float32) []byte {
	if v == nil {
		return nil
	}
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

// DecodeVector reverses [EncodeVector]. Errors: a length that is not a
// multiple of 4 (wrapping [ErrInvalid]). Empty gives nil.
func DecodeVector(b []byte) ([]float32, error) {
	if len(b) == 0 {
		return nil, nil
	}
	if len(b)%4 != 0 {
		return nil, fmt.Errorf("%w: a vector of %d bytes is not float32 values", ErrInvalid, len(b))
	}
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v, nil
}

// MemoryStore is an in-process [Store]: nothing survives the process. The
// zero value is ready to use. memstore.Store embeds one, so that
// the SDK's default store holds memories too.
type MemoryStore struct {
	mu     sync.RWMutex
	agents map[string]*agentRecords
}

type agentRecords struct {
	byID   map[string]*Record
	byText map[string]string
	lex    Index
}

var (
	_ Store      = (*MemoryStore)(nil)
	_ Searcher   = (*MemoryStore)(nil)
	_ BatchAdder = (*MemoryStore)(nil)
)

// NewMemoryStore returns an empty MemoryStore.
func NewMemoryStore() *MemoryStore { return &MemoryStore{} }

func (s *MemoryStore) agent(id string, create bool) *agentRecords {
	a := s.agents[id]
	if a == nil && create {
		if s.agents == nil {
			s.agents = map[string]*agentRecords{}
		}
		a = &agentRecords{byID: map[string]*Record{}, byText: map[string]string{}}
		s.agents[id] = a
	}
	return a
}

// AddMemory implements [Store].
func (s *MemoryStore) AddMemory(ctx context.Context, r Record) (Record, bool, error) {
	if err := ctx.Err(); err != nil {
		return Record{}, false, err
	}
	if err := r.Validate(); err != nil {
		return Record{}, false, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.add(r)
}

// AddMemories implements [BatchAdder]: every record under one lock.
func (s *MemoryStore) AddMemories(ctx context.Context, recs []Record) ([]Added, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := ValidateBatch(recs); err != nil {
		return nil, err
	}
	out := make([]Added, len(recs))
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range recs {
		got, dup, err := s.add(recs[i])
		if err != nil {
			return nil, err
		}
		out[i] = Added{Stored: got, Dup: dup}
	}
	return out, nil
}

// add stores r, which is valid, as [Store.AddMemory]; s.mu is held.
func (s *MemoryStore) add(r Record) (Record, bool, error) {
	r = r.Clone()
	r.Created, r.LastAccess = r.Created.UTC(), r.LastAccess.UTC()
	a := s.agent(r.AgentID, true)
	if id, ok := a.byText[r.Text]; ok {
		m := Merge(*a.byID[id], r)
		a.byID[id] = &m
		return m.Clone(), true, nil
	}
	if _, ok := a.byID[r.ID]; ok {
		return Record{}, false, fmt.Errorf("%w: agent %s already has a memory %s with another text", ErrInvalid, r.AgentID, r.ID)
	}
	a.byID[r.ID] = &r
	a.byText[r.Text] = r.ID
	a.lex.Add(r.ID, r.Text)
	return r.Clone(), false, nil
}

// UpdateMemories implements [Store].
func (s *MemoryStore) UpdateMemories(ctx context.Context, agentID string, recs []Record) error {
	return s.replace(ctx, agentID, recs, CheckUpdate, func(n *Record, r Record) {
		n.Kind, n.Importance, n.Important, n.LastAccess, n.AccessCount = r.Kind, r.Importance, r.Important, r.LastAccess.UTC(), r.AccessCount
		n.SupersededBy = r.SupersededBy
	})
}

// SetVectors implements [Store].
func (s *MemoryStore) SetVectors(ctx context.Context, agentID string, recs []Record) error {
	return s.replace(ctx, agentID, recs, CheckVector, func(n *Record, r Record) {
		n.Model, n.Dimensions, n.Vector = r.Model, r.Dimensions, slices.Clone(r.Vector)
	})
}

// replace checks every record of recs with check before changing anything,
// then gives each stored record of the same ID, copied, to set with the
// new values; IDs the agent does not hold are skipped.
func (s *MemoryStore) replace(ctx context.Context, agentID string, recs []Record, check func(string, *Record) error, set func(n *Record, r Record)) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := ValidateAgentID(agentID); err != nil {
		return err
	}
	for i := range recs {
		if err := check(agentID, &recs[i]); err != nil {
			return err
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	a := s.agent(agentID, false)
	if a == nil {
		return nil
	}
	for _, r := range recs {
		old, ok := a.byID[r.ID]
		if !ok {
			continue
		}
		n := *old
		set(&n, r)
		a.byID[r.ID] = &n
	}
	return nil
}

// CheckUpdate validates a record given to [Store.UpdateMemories] for
// agentID, as stores must before changing anything: its ID, and the
// fields that are replaced (Kind, Importance, LastAccess, AccessCount,
// SupersededBy). Errors wrap [ErrInvalid].
func CheckUpdate(agentID string, r *Record) error {
	c := Record{ID: r.ID, AgentID: agentID, Text: "-", Kind: r.Kind, Importance: r.Importance,
		Created: time.Unix(0, 0), LastAccess: r.LastAccess, AccessCount: r.AccessCount, SupersededBy: r.SupersededBy}
	if r.AgentID != "" && r.AgentID != agentID {
		return fmt.Errorf("%w: memory %s belongs to %s, not %s", ErrInvalid, r.ID, r.AgentID, agentID)
	}
	return c.Validate()
}

// CheckVector validates a record given to [Store.SetVectors] for agentID:
// its ID, and a vector with its model and dimensions (or none of the
// three). Errors wrap [ErrInvalid].
func CheckVector(agentID string, r *Record) error {
	c := Record{ID: r.ID, AgentID: agentID, Text: "-", Kind: KindObservation, Created: time.Unix(0, 0), LastAccess: time.Unix(0, 0),
		Model: r.Model, Dimensions: r.Dimensions, Vector: r.Vector}
	if r.AgentID != "" && r.AgentID != agentID {
		return fmt.Errorf("%w: memory %s belongs to %s, not %s", ErrInvalid, r.ID, r.AgentID, agentID)
	}
	return c.Validate()
}

// DeleteMemories implements [Store].
func (s *MemoryStore) DeleteMemories(ctx context.Context, agentID string, ids []string) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if err := ValidateAgentID(agentID); err != nil {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	a := s.agent(agentID, false)
	if a == nil {
		return 0, nil
	}
	n := 0
	for _, id := range ids {
		if r, ok := a.byID[id]; ok {
			delete(a.byText, r.Text)
			delete(a.byID, id)
			a.lex.Remove(id)
			n++
		}
	}
	return n, nil
}

// Memories implements [Store].
func (s *MemoryStore) Memories(ctx context.Context, agentID string) ([]Record, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := ValidateAgentID(agentID); err != nil {
		return nil, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := []Record{}
	if a := s.agent(agentID, false); a != nil {
		out = make([]Record, 0, len(a.byID))
		for _, r := range a.byID {
			out = append(out, r.Clone())
		}
	}
	slices.SortFunc(out, func(a, b Record) int { return CompareRecords(&a, &b) })
	return out, nil
}

// CountMemories implements [Store].
func (s *MemoryStore) CountMemories(ctx context.Context, agentID string) (Counts, error) {
	if err := ctx.Err(); err != nil {
		return Counts{}, err
	}
	if err := ValidateAgentID(agentID); err != nil {
		return Counts{}, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	a := s.agent(agentID, false)
	if a == nil {
		return Counts{}, nil
	}
	recs := make([]Record, 0, len(a.byID))
	for _, r := range a.byID {
		recs = append(recs, Record{Model: r.Model, Dimensions: r.Dimensions, Vector: r.Vector})
	}
	return CountRecords(recs), nil
}

// SearchMemories implements [Searcher] with an in-process BM25 [Index].
func (s *MemoryStore) SearchMemories(ctx context.Context, agentID, text string, limit int) ([]Hit, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := CheckSearch(agentID, limit); err != nil {
		return nil, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	a := s.agent(agentID, false)
	if a == nil {
		return []Hit{}, nil
	}
	return orEmpty(a.lex.Search(text, limit)), nil
}

// orEmpty returns h, or an empty slice for nil.
func orEmpty(h []Hit) []Hit {
	if h == nil {
		return []Hit{}
	}
	return h
}
