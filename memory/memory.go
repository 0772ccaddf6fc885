package memory

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/existence-loop/sdk/clock"
	"github.com/existence-loop/sdk/llm"
	"github.com/existence-loop/sdk/llm/middleware"
)

// Defaults of [Config].
const (
	// DefaultCap is the most memories one agent keeps: 10,000. Past it
	// the lowest-value ones are evicted (never important ones).
	DefaultCap = 10000
	// DefaultMergeAt is the cosine similarity (0–1) at or above which a
	// new vector's nearest memory of the same kind absorbs it:
	// consolidation of near-duplicates.
	DefaultMergeAt = 0.95
	// DefaultMinRelevance is the original's similarity threshold: a
	// recall considers only memories whose cosine with the query is at
	// least 0.35.
	DefaultMinRelevance = 0.35
	// DefaultK is how many memories a recall returns: 3, as the
	// original's recall before planning.
	DefaultK = 3
	// DefaultDecayPerHour is the recency factor per hour since a memory
	// was last accessed: 0.995, as in Generative Agents.
	DefaultDecayPerHour = 0.995
	// DefaultEmbedTimeout bounds the embedding call of a store or a
	// recall: past it the memory is stored pending, or the recall falls
	// back to recency and importance. Nothing waits longer on an
	// embedding.
	DefaultEmbedTimeout = 10 * time.Second
	// DefaultBatch is how many pending memories one backfill call embeds.
	DefaultBatch = 32
	// DefaultMinBackoff and DefaultMaxBackoff bound the wait between
	// failed backfill attempts: it starts at 2 s and doubles up to 5
	// minutes (longer when the server's Retry-After says so).
	DefaultMinBackoff = 2 * time.Second
	DefaultMaxBackoff = 5 * time.Minute
)

// NoThreshold, as [Query].MinRelevance, keeps every memory whatever its
// cosine with the query (cosines are never below -1).
const NoThreshold = -1.0

// Weights weigh the parts of a recall's score. Each part is normalised
// to 0–1 over the recall's candidates (min-max, as in Generative Agents)
// before it is weighed. Negative weights are refused.
type Weights struct {
	// Relevance weighs the cosine similarity with the query.
	Relevance float64 `json:"relevance"`
	// Recency weighs DecayPerHour to the power of the hours since the
	// memory was last accessed.
	Recency float64 `json:"recency"`
	// Importance weighs the memory's importance.
	Importance float64 `json:"importance"`
}

// DefaultWeights weigh the three parts equally, as Generative Agents.
var DefaultWeights = Weights{Relevance: 1, Recency: 1, Importance: 1}

// Config configures a [Memory]. Only Store is required.
type Config struct {
	// Store keeps the memories: any store of the SDK (they all implement
	// [Store]), or [NewMemoryStore]. Required.
	Store Store
	// Embedder embeds texts and queries (llm/ollama's Embedder with
	// nomic-embed-text, llm/openai's, llmtest's fake). Nil stores every
	// memory pending, as text, and recalls by recency and importance.
	Embedder llm.Embedder
	// Clock tells the time of memories and runs the backfill's timer;
	// nil means the system clock.
	Clock clock.Clock
	// Weights of a recall's score; the zero value means
	// [DefaultWeights].
	Weights Weights
	// DecayPerHour is the recency factor per hour (0–1, exclusive of 0);
	// 0 means [DefaultDecayPerHour].
	DecayPerHour float64
	// Cap is the most memories an agent keeps (0 means [DefaultCap];
	// negative means no cap).
	Cap int
	// MergeAt is the cosine (0–1) at or above which a new vector's
	// nearest memory of the same kind absorbs it; 0 means
	// [DefaultMergeAt]; above 1 never merges.
	MergeAt float64
	// EmbedTimeout bounds the embedding call of [Memory.Remember] and
	// [Memory.Recall]; 0 means [DefaultEmbedTimeout].
	EmbedTimeout time.Duration
	// Batch is how many memories one backfill or reembed call embeds; 0
	// means [DefaultBatch].
	Batch int
	// MinBackoff and MaxBackoff bound the wait between failed backfill
	// attempts; 0 means [DefaultMinBackoff] and [DefaultMaxBackoff].
	MinBackoff, MaxBackoff time.Duration
	// NoBackfill turns the background backfill off: pending memories are
	// embedded only by [Memory.Backfill]. Command-line tools that open a
	// store for one operation set it.
	NoBackfill bool
	// OnEvent receives every event of every agent (after the agent's
	// subscriber, see [Memory.Subscribe]); it must be safe for concurrent
	// use and return quickly.
	OnEvent func(Event)
	// Logger receives diagnostics; nil means slog.Default().
	Logger *slog.Logger
}

// Memory is agents' long-term semantic memory: it stores what they did,
// embeds it, and recalls the memories that matter for a query. One Memory
// serves any number of agents over one [Store]; it is the only writer of
// an agent's memories while it serves it and caches them (vectors in one
// contiguous matrix per agent), loading each agent on first use. It is
// safe for concurrent use.
type Memory struct {
	cfg Config
	log *slog.Logger

	mu     sync.Mutex
	agents map[string]*agent
	subs   map[string]*subscription

	counters struct {
		stored, duplicates, pending, embedded, backfillFailures atomic.Int64
		merged, evicted, recalls, fallbacks, forgotten          atomic.Int64
	}

	bf backfill
}

// New returns a Memory for cfg. Errors: no Store; a negative weight,
// timeout, batch or backoff; a decay outside 0–1.
func New(cfg Config) (*Memory, error) {
	if cfg.Store == nil {
		return nil, errors.New("memory: Config.Store is required")
	}
	w := cfg.Weights
	if w.Relevance < 0 || w.Recency < 0 || w.Importance < 0 || math.IsNaN(w.Relevance+w.Recency+w.Importance) {
		return nil, fmt.Errorf("memory: Config.Weights %+v: weights must not be negative", w)
	}
	if w == (Weights{}) {
		cfg.Weights = DefaultWeights
	}
	switch {
	case cfg.DecayPerHour == 0:
		cfg.DecayPerHour = DefaultDecayPerHour
	case !(cfg.DecayPerHour > 0 && cfg.DecayPerHour <= 1):
		return nil, fmt.Errorf("memory: Config.DecayPerHour %v is outside (0, 1]", cfg.DecayPerHour)
	}
	if cfg.EmbedTimeout < 0 || cfg.Batch < 0 || cfg.MinBackoff < 0 || cfg.MaxBackoff < 0 || math.IsNaN(cfg.MergeAt) || cfg.MergeAt < 0 {
		return nil, errors.New("memory: Config.EmbedTimeout, Batch, MinBackoff, MaxBackoff and MergeAt must not be negative")
	}
	if cfg.Cap == 0 {
		cfg.Cap = DefaultCap
	}
	if cfg.MergeAt == 0 {
		cfg.MergeAt = DefaultMergeAt
	}
	if cfg.EmbedTimeout == 0 {
		cfg.EmbedTimeout = DefaultEmbedTimeout
	}
	if cfg.Batch == 0 {
		cfg.Batch = DefaultBatch
	}
	if cfg.MinBackoff == 0 {
		cfg.MinBackoff = DefaultMinBackoff
	}
	if cfg.MaxBackoff == 0 {
		cfg.MaxBackoff = DefaultMaxBackoff
	}
	cfg.MaxBackoff = max(cfg.MaxBackoff, cfg.MinBackoff)
	if cfg.Clock == nil {
		cfg.Clock = clock.System
	}
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	m := &Memory{cfg: cfg, log: log, agents: map[string]*agent{}, subs: map[string]*subscription{}}
	m.bf.init()
	return m, nil
}

// Embedder returns the configured embedder, nil when there is none.
func (m *Memory) Embedder() llm.Embedder { return m.cfg.Embedder }

// Store returns the configured store.
func (m *Memory) Store() Store { return m.cfg.Store }

// Counters returns the running totals since New.
func (m *Memory) Counters() Counters {
	c := &m.counters
	return Counters{
		Stored: c.stored.Load(), Duplicates: c.duplicates.Load(), Pending: c.pending.Load(),
		Embedded: c.embedded.Load(), BackfillFailures: c.backfillFailures.Load(),
		Merged: c.merged.Load(), Evicted: c.evicted.Load(),
		Recalls: c.recalls.Load(), Fallbacks: c.fallbacks.Load(), Forgotten: c.forgotten.Load(),
	}
}

// Subscribe delivers the events of agentID to fn (before Config.OnEvent)
// until cancel is called; a later Subscribe for the same agent replaces
// fn. The existence package subscribes each agent's observer. fn must be
// safe for concurrent use and return quickly.
func (m *Memory) Subscribe(agentID string, fn func(Event)) (cancel func()) {
	s := &subscription{fn: fn}
	m.mu.Lock()
	m.subs[agentID] = s
	m.mu.Unlock()
	return func() {
		m.mu.Lock()
		defer m.mu.Unlock()
		if m.subs[agentID] == s {
			delete(m.subs, agentID)
		}
	}
}

// subscription is one subscriber; its address identifies it.
type subscription struct{ fn func(Event) }

// emit delivers events; never call it with an agent's lock held.
func (m *Memory) emit(events ...Event) {
	for _, e := range events {
		if e.Err != nil {
			e.Error = e.Err.Error()
		}
		m.mu.Lock()
		s := m.subs[e.AgentID]
		m.mu.Unlock()
		if s != nil {
			s.fn(e)
		}
		if m.cfg.OnEvent != nil {
			m.cfg.OnEvent(e)
		}
	}
}

// now is the clock's time in UTC, to the microsecond (what every store
// keeps).
func (m *Memory) now() time.Time { return m.cfg.Clock.Now().UTC().Truncate(time.Microsecond) }

// Note is what [Memory.Remember] stores.
type Note struct {
	// Text is what to remember: not blank, at most [MaxTextChars]
	// characters.
	Text string
	// Kind says where it came from; empty means [KindObservation].
	Kind Kind
	// Importance is how much it matters, 0–1; 0 means
	// [DefaultImportance] of the kind.
	Importance float64
	// Important keeps the memory from eviction.
	Important bool
	// Fact names the fact the note states ([Record].Fact), such as
	// "deploy.target": the agent's older memories naming it are then
	// superseded by this one. Empty for none.
	Fact string
}

// Remember stores note for agentID and returns the memory as stored. The
// text is embedded first (bounded by Config.EmbedTimeout); when there is
// no embedder, the embedder fails (down, busy, slow) or its space is not
// the agent's, the memory is stored as text, pending, and an
// [EventPending] says why; the backfill embeds it later. Nothing is lost
// and nothing waits longer. Until the backfill succeeds again, later
// stores do not ask the embedder at all (Cause "backoff"): a down or slow
// embedder costs one timeout, not one per memory.
//
// A text the agent already has is stored once: its access count is
// raised instead ([EventStored] with Cause "duplicate"). A new vector
// whose nearest memory of the same kind has a cosine of at least
// Config.MergeAt is merged into that memory ([EventMerged]), which is
// returned. Past the cap, the lowest-value memories are evicted
// ([EventEvicted]).
//
// Errors: [ErrInvalid] for a bad agent id, text, kind or importance; the
// store's errors, wrapped, naming the agent. ctx's error when it ends.
func (m *Memory) Remember(ctx context.Context, agentID string, note Note) (Record, error) {
	if err := ValidateAgentID(agentID); err != nil {
		return Record{}, err
	}
	if err := ValidateText(note.Text); err != nil {
		return Record{}, err
	}
	if note.Kind == "" {
		note.Kind = KindObservation
	}
	if !note.Kind.Valid() {
		return Record{}, fmt.Errorf("%w: kind %q is not one of %v", ErrInvalid, note.Kind, Kinds())
	}
	if math.IsNaN(note.Importance) || note.Importance < 0 || note.Importance > 1 {
		return Record{}, fmt.Errorf("%w: importance %v is outside 0–1", ErrInvalid, note.Importance)
	}
	if note.Importance == 0 {
		note.Importance = DefaultImportance(note.Kind)
	}
	a, err := m.agent(ctx, agentID)
	if err != nil {
		return Record{}, err
	}
	now := m.now()
	r := Record{ID: NewID(), AgentID: agentID, Text: note.Text, Kind: note.Kind, Importance: note.Importance,
		Important: note.Important, Created: now, LastAccess: now, Fact: note.Fact}
	if err := r.Validate(); err != nil {
		return Record{}, err
	}

	a.mu.Lock()
	_, known := a.byText[note.Text]
	space := a.space
	a.mu.Unlock()

	var (
		cause  string
		embErr error
	)
	switch e := m.cfg.Embedder; {
	case known:
		// stored again: no embedding needed
	case e == nil:
		cause = "no_embedder"
	case !space.IsZero() && e.Model() != space.Model:
		cause, embErr = "space", &SpaceError{AgentID: agentID, Memories: space, Query: Space{Model: e.Model(), Dimensions: e.Dimensions()}}
	case m.bf.failing():
		cause, embErr = "backoff", errBackoff
	default:
		vec, err := m.embedOne(ctx, note.Text)
		if err == nil && !space.IsZero() && len(vec) != space.Dimensions {
			err = &SpaceError{AgentID: agentID, Memories: space, Query: Space{Model: e.Model(), Dimensions: len(vec)}}
		}
		switch {
		case err == nil:
			r.Model, r.Dimensions, r.Vector = e.Model(), len(vec), vec
		case ctx.Err() != nil:
			return Record{}, fmt.Errorf("memory: remember for %s: %w", agentID, ctx.Err())
		case errors.Is(err, ErrSpace):
			cause, embErr = "space", err
		default:
			cause, embErr = middleware.Classify(err), err
		}
	}

	a.mu.Lock()
	stored, events, err := m.addLocked(ctx, a, r)
	a.mu.Unlock()
	if err != nil {
		return Record{}, err
	}
	if stored.pendingNew && cause != "" {
		m.counters.pending.Add(1)
		events = append([]Event{{Kind: EventPending, AgentID: agentID, Text: note.Text, Cause: cause, Err: embErr, Time: now}}, events...)
		if cause != "no_embedder" && cause != "space" && cause != "backoff" {
			m.bf.schedule(m, m.bf.wait(m))
		}
	}
	m.emit(events...)
	return stored.rec, nil
}

// errBackoff is the cause of memories stored, and recalls made, without
// asking the embedder while the backfill backs off after a failure.
var errBackoff = errors.New("memory: the embedder failed and the backfill has not succeeded since; not asked until it does")

// embedOne embeds one text within Config.EmbedTimeout and returns its
// unit vector.
func (m *Memory) embedOne(ctx context.Context, text string) ([]float32, error) {
	ctx, cancel := context.WithTimeout(ctx, m.cfg.EmbedTimeout)
	defer cancel()
	vecs, err := m.cfg.Embedder.Embed(ctx, []string{text})
	if err != nil {
		return nil, err
	}
	if len(vecs) != 1 {
		return nil, &llm.DimensionsError{Provider: "memory", Model: m.cfg.Embedder.Model(), Want: 1, Got: len(vecs), Index: -1}
	}
	return Normalize(vecs[0])
}

// added is what addLocked stored.
type added struct {
	rec        Record
	pendingNew bool // a new memory stored without a vector
}

// addLocked stores r (a.mu held), merges and evicts, and returns the
// memory to report and the events to emit after unlocking.
func (m *Memory) addLocked(ctx context.Context, a *agent, r Record) (added, []Event, error) {
	stored, dup, err := m.cfg.Store.AddMemory(ctx, r)
	if err != nil {
		return added{}, nil, fmt.Errorf("memory: storing a memory of %s: %w", a.id, err)
	}
	if dup {
		m.counters.duplicates.Add(1)
		if e := a.byText[stored.Text]; e != nil {
			e.rec.Importance, e.rec.Important = stored.Importance, stored.Important
			e.rec.LastAccess, e.rec.AccessCount, e.rec.Fact = stored.LastAccess, stored.AccessCount, stored.Fact
			a.syncRow(e)
			if e.row < 0 && !stored.Pending() {
				a.setVector(e, stored.Space(), stored.Vector)
			}
		} else {
			a.insert(stored) // stored by another handle meanwhile
		}
		out := stored.Clone()
		events := []Event{{Kind: EventStored, AgentID: a.id, Text: stored.Text, Record: &out, Cause: "duplicate", Time: r.Created}}
		return added{rec: out}, append(events, m.factLocked(ctx, a, stored.Fact, "")...), nil
	}
	m.counters.stored.Add(1)
	e := a.insert(stored)
	events := []Event{{Kind: EventStored, AgentID: a.id, Text: stored.Text, Record: new(stored.Clone()), Time: r.Created}}
	kept := stored
	if e.row >= 0 {
		if k, ev, ok := m.mergeLocked(ctx, a, e); ok {
			kept = k
			events = append(events, ev...)
		}
	}
	events = append(events, m.factLocked(ctx, a, stored.Fact, stored.ID)...)
	events = append(events, m.evictLocked(ctx, a)...)
	return added{rec: kept.Clone(), pendingNew: e.row < 0}, events, nil
}

// Forget deletes the memories of agentID with these ids, from the store
// and the cache, and returns how many existed ([EventForgotten]).
// Errors: [ErrInvalid] for a bad agent id; the store's, wrapped.
func (m *Memory) Forget(ctx context.Context, agentID string, ids ...string) (int, error) {
	if err := ValidateAgentID(agentID); err != nil {
		return 0, err
	}
	a, err := m.agent(ctx, agentID)
	if err != nil {
		return 0, err
	}
	a.mu.Lock()
	n, err := m.cfg.Store.DeleteMemories(ctx, agentID, ids)
	if err != nil {
		a.mu.Unlock()
		return 0, fmt.Errorf("memory: forgetting memories of %s: %w", agentID, err)
	}
	var gone []string
	for _, id := range ids {
		if e := a.recs[id]; e != nil {
			a.remove(e)
			gone = append(gone, id)
		}
	}
	a.mu.Unlock()
	m.counters.forgotten.Add(int64(n))
	if n > 0 {
		m.emit(Event{Kind: EventForgotten, AgentID: agentID, IDs: gone, Count: n, Time: m.now()})
	}
	return n, nil
}

// Stats are one agent's memories as a [Memory] sees them.
type Stats struct {
	// Memories is how many the agent has; Embedded how many have a vector
	// in Space; Pending the others (no vector yet, or a vector of another
	// space left by an interrupted reembed), which the backfill embeds.
	Memories int `json:"memories"`
	Embedded int `json:"embedded"`
	Pending  int `json:"pending"`
	// Important is how many are marked important.
	Important int `json:"important"`
	// Space is the agent's embedding space; zero when no memory has a
	// vector yet.
	Space Space `json:"space"`
	// Kinds counts the memories by kind.
	Kinds map[Kind]int `json:"kinds,omitempty"`
}

// Stats returns the agent's counts, loading the agent. Errors: a bad
// agent id; the store's, wrapped.
func (m *Memory) Stats(ctx context.Context, agentID string) (Stats, error) {
	a, err := m.agent(ctx, agentID)
	if err != nil {
		return Stats{}, err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	s := Stats{Memories: len(a.recs), Embedded: len(a.rows), Space: a.space, Kinds: map[Kind]int{}}
	s.Pending = s.Memories - s.Embedded
	for _, e := range a.recs {
		s.Kinds[e.rec.Kind]++
		if e.rec.Important {
			s.Important++
		}
	}
	return s, nil
}

// Get returns one memory of agentID, with its vector. Errors:
// [ErrNotFound]; a bad agent id; the store's, wrapped.
func (m *Memory) Get(ctx context.Context, agentID, id string) (Record, error) {
	a, err := m.agent(ctx, agentID)
	if err != nil {
		return Record{}, err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	e := a.recs[id]
	if e == nil {
		return Record{}, fmt.Errorf("%w: memory %s of %s", ErrNotFound, id, agentID)
	}
	return a.record(e), nil
}

// List returns every memory of agentID, oldest first, with vectors.
func (m *Memory) List(ctx context.Context, agentID string) ([]Record, error) {
	a, err := m.agent(ctx, agentID)
	if err != nil {
		return nil, err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make([]Record, 0, len(a.recs))
	for _, e := range a.recs {
		out = append(out, a.record(e))
	}
	sortRecords(out)
	return out, nil
}

// Unload drops the agent's cache: the next use reads the store again.
// The existence package unloads an agent when it stops running it (its
// lease may go to another process, which becomes the writer).
func (m *Memory) Unload(agentID string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.agents, agentID)
}

// Close stops the background backfill and waits for an attempt in
// progress to end. The store is not closed.
func (m *Memory) Close() error {
	m.bf.close()
	return nil
}

// agent returns agentID's cache, loading it from the store on first use.
func (m *Memory) agent(ctx context.Context, agentID string) (*agent, error) {
	if err := ValidateAgentID(agentID); err != nil {
		return nil, err
	}
	m.mu.Lock()
	a := m.agents[agentID]
	if a == nil {
		a = &agent{id: agentID}
		m.agents[agentID] = a
	}
	m.mu.Unlock()
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.loaded {
		return a, nil
	}
	recs, err := m.cfg.Store.Memories(ctx, agentID)
	if err != nil {
		return nil, fmt.Errorf("memory: loading the memories of %s: %w", agentID, err)
	}
	a.load(recs, m.embedderSpace())
	if a.needsEmbedding() > 0 && m.cfg.Embedder != nil {
		m.bf.schedule(m, 0)
	}
	return a, nil
}

// embedderSpace is the embedder's space as far as known (Dimensions 0
// until its first reply); zero without an embedder.
func (m *Memory) embedderSpace() Space {
	if m.cfg.Embedder == nil {
		return Space{}
	}
	return Space{Model: m.cfg.Embedder.Model(), Dimensions: m.cfg.Embedder.Dimensions()}
}

// loaded returns the agents in the cache.
func (m *Memory) loaded() []*agent {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]*agent, 0, len(m.agents))
	for _, a := range m.agents {
		out = append(out, a)
	}
	return out
}

// trimText flattens white space for event texts.
func trimText(s string) string { return strings.Join(strings.Fields(s), " ") }
