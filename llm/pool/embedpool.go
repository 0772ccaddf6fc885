package pool

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	"github.com/existence-loop/sdk/llm"
)

// EmbedServer is one embedding server of an [EmbedPool].
type EmbedServer struct {
	// Name identifies the server in the stats: its URL, say. Names must
	// be unique and not empty.
	Name string
	// Embedder calls the server: an adapter (ollama.NewEmbedder,
	// openai.NewEmbedder), without retries.
	Embedder llm.Embedder
}

// EmbedConfig configures an [EmbedPool].
type EmbedConfig struct {
	// Servers are the embedding servers, at least one, all serving the
	// same embedding model (one vector space).
	Servers []EmbedServer
	// Failures and Probe are the health rules of [Config]: that many
	// server failures in a row ([IsServerFailure], a call whose deadline
	// fired included, whatever its cause: an embedding call's deadline
	// is its own) mark a server down
	// (0 means DefaultFailures, 3), and a server down is probed by
	// one call Probe later (0 means DefaultProbe, 10 s).
	Failures int
	Probe    time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// EmbedPool is an [llm.Embedder] that spreads embedding calls over several
// servers of one embedding model. An embedding has no KV cache to keep
// warm, so nothing is pinned: each call goes to the server with the fewest
// calls in flight, ties taken in turn (round-robin). Health is as in
// [Pool]: a server that fails Failures calls in a row is down until, Probe
// later, a call probes it and succeeds; a call that could not reach its
// server ([llm.ErrUnavailable]) is sent at once to the next server, since the
// request never arrived; any other error is returned.
//
// Model is the servers' model, and every reply must have the pool's
// dimensions (the first server's that knows them, else the first reply's):
// a server answering with other dimensions gets a [*llm.DimensionsError], so
// that one pool never mixes two vector spaces.
//
// It is safe for concurrent use.
type EmbedPool struct {
	cfg     EmbedConfig
	servers []*embedServer
	turn    atomic.Uint64 // round-robin among ties
	dims    atomic.Int64  // learned from the servers or the first reply
}

type embedServer struct {
	name     string
	emb      llm.Embedder
	inFlight atomic.Int64
	health
}

var _ llm.Embedder = (*EmbedPool)(nil)

// NewEmbed returns a pool of cfg.Servers. Errors: no server, a server
// without a name or embedder, two of one name, or servers of different
// models.
func NewEmbed(cfg EmbedConfig) (*EmbedPool, error) {
	if len(cfg.Servers) == 0 {
		return nil, errors.New("llm: an embedding pool needs at least one server")
	}
	healthDefaults(&cfg.Failures, &cfg.Probe, &cfg.Now)
	p := &EmbedPool{cfg: cfg}
	seen := map[string]bool{}
	for i, s := range cfg.Servers {
		if err := checkServer("embedding pool", i, s.Name, s.Embedder != nil, seen); err != nil {
			return nil, err
		}
		if m, first := s.Embedder.Model(), cfg.Servers[0].Embedder.Model(); m != first {
			return nil, fmt.Errorf("llm: embedding pool server %q serves %q, not %q: one pool is one vector space", s.Name, m, first)
		}
		p.servers = append(p.servers, &embedServer{name: s.Name, emb: s.Embedder})
	}
	return p, nil
}

// Model returns the servers' embedding model.
func (p *EmbedPool) Model() string { return p.servers[0].emb.Model() }

// Dimensions returns the pool's dimensions: learned from a reply, else
// the first server's that knows them; 0 while unknown.
func (p *EmbedPool) Dimensions() int {
	if d := p.dims.Load(); d > 0 {
		return int(d)
	}
	for _, s := range p.servers {
		if d := s.emb.Dimensions(); d > 0 {
			return d
		}
	}
	return 0
}

// order returns the servers by calls in flight, fewest first, ties in
// turn.
func (p *EmbedPool) order() []*embedServer {
	n := len(p.servers)
	start := int(p.turn.Add(1) % uint64(n))
	out := make([]*embedServer, 0, n)
	out = append(out, p.servers[start:]...)
	out = append(out, p.servers[:start]...)
	slices.SortStableFunc(out, func(a, b *embedServer) int { return cmp.Compare(a.inFlight.Load(), b.inFlight.Load()) })
	return out
}

// Embed sends texts to one server (see [EmbedPool]) and checks the reply
// against the pool's dimensions. Errors: the server's, a
// [*llm.DimensionsError], or [ErrNoServer] when no server may take the call;
// a call that reached no server wraps the last [llm.ErrUnavailable].
func (p *EmbedPool) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if len(texts) == 0 {
		return [][]float32{}, nil
	}
	var last error
	for _, s := range p.order() {
		probe, ok := s.take(p.cfg.Now())
		if !ok {
			continue
		}
		s.inFlight.Add(1)
		vecs, err := s.emb.Embed(ctx, texts)
		s.inFlight.Add(-1)
		verdict, gone := judge(ctx, err, true) // its callers bound each call (memory's EmbedTimeout)
		s.done(p.cfg.Now(), verdict, probe, gone, p.cfg.Failures, p.cfg.Probe)
		if err != nil && errors.Is(err, llm.ErrUnavailable) && ctx.Err() == nil {
			last = fmt.Errorf("%s: %w", s.name, err)
			continue // never reached: the next server may take it
		}
		if err != nil {
			return nil, err
		}
		d, err := llm.CheckEmbeddings("pool "+s.name, p.Model(), vecs, len(texts), p.Dimensions())
		if err != nil {
			return nil, err
		}
		p.dims.CompareAndSwap(0, int64(d))
		return vecs, nil
	}
	if last != nil {
		return nil, last
	}
	return nil, ErrNoServer
}

// EmbedServerStats are one server's counters in an [EmbedPool].
type EmbedServerStats struct {
	// Name is the server's name.
	Name string
	// Calls counts the calls sent to it, Errors those that failed as a
	// server failure, Downs the times it was marked down; InFlight is
	// its calls in flight now.
	Calls, Errors, Downs, InFlight int64
	// Down reports that it is down now; Until is when it will be probed.
	Down  bool
	Until time.Time
}

// Stats returns each server's counters, in the order of
// EmbedConfig.Servers.
func (p *EmbedPool) Stats() []EmbedServerStats {
	out := make([]EmbedServerStats, len(p.servers))
	for i, s := range p.servers {
		s.mu.Lock()
		out[i] = EmbedServerStats{Name: s.name, Calls: s.calls, Errors: s.errs, Downs: s.downs, InFlight: s.inFlight.Load(), Down: !s.downUntil.IsZero(), Until: s.downUntil}
		s.mu.Unlock()
	}
	return out
}
