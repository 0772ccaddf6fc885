package cli

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/existence-loop/sdk/llm"
)

// swarmPool is the pool of model servers of a swarm run with several
// -llm-url.
type swarmPool struct {
	pool    *llm.Pool
	servers []*swarmServer
}

// poolModel builds one adapter per -llm-url (starting stand-ins) and an
// llm.Pool over them, named by their URLs. stop closes the stand-ins.
func poolModel(o *swarmOptions, counts *simModel) (*swarmPool, func(), error) {
	p := &swarmPool{}
	var stops []func()
	stop := func() {
		for _, f := range stops {
			f()
		}
	}
	var servers []llm.PoolServer
	for _, u := range o.llmURLs {
		oi := *o
		oi.llmURL = u
		m, srv, s, err := serverModel(&oi, counts)
		if err != nil {
			stop()
			return nil, nil, err
		}
		stops = append(stops, s)
		p.servers = append(p.servers, srv)
		servers = append(servers, llm.PoolServer{Name: srv.URL, Model: m})
	}
	pool, err := llm.NewPool(llm.PoolConfig{Servers: servers})
	if err != nil {
		stop()
		return nil, nil, err
	}
	p.pool = pool
	return p, stop, nil
}

// start marks the start of the timed run on every server.
func (p *swarmPool) start() {
	if p == nil {
		return
	}
	for _, s := range p.servers {
		s.start()
	}
}

// finish records every server's counters and the pool's.
func (p *swarmPool) finish(elapsed time.Duration) []*swarmServer {
	if p == nil {
		return nil
	}
	for i, st := range p.pool.Stats() {
		s := p.servers[i]
		if i > 0 {
			s.finish(elapsed) // the first is the run's Server, finished with it
		}
		s.Pool = &swarmPoolServer{Calls: st.Calls, Errors: st.Errors, Downs: st.Downs, Down: st.Down, Limit: st.Limit.Limit}
	}
	return p.servers
}

// swarmPoolServer is what the pool counted of one server.
type swarmPoolServer struct {
	// Calls counts the calls sent to it, Errors those that failed as a
	// server failure, Downs the times it was marked down; Down reports it
	// down at the end and Limit is its adaptive limit then.
	Calls  int64 `json:"calls"`
	Errors int64 `json:"errors"`
	Downs  int64 `json:"downs"`
	Down   bool  `json:"down"`
	Limit  int   `json:"limit"`
}

// printPool writes one line per server of the pool.
func (res *swarmResult) printPool(w io.Writer) {
	for _, s := range res.Servers {
		if s.Pool == nil {
			continue
		}
		fmt.Fprintf(w, "pool server   %s: %d calls, %d failed, down %d times (down at the end: %v), limit %d", s.URL, s.Pool.Calls, s.Pool.Errors, s.Pool.Downs, s.Pool.Down, s.Pool.Limit)
		if st := s.Standin; st != nil {
			fmt.Fprintf(w, "; stand-in: %d requests, %.1f%% of cycle prompt tokens from its KV cache", st.Requests, 100*st.CycleCachedShare)
		}
		fmt.Fprintln(w)
	}
}

// trioModel builds the run's model: the adapter of -llm-url (starting the
// stand-in first for "standin:..."), or with several -llm-url an llm.Pool
// of one adapter each. It points o.llmURL at what it resolved (the URLs,
// comma-separated, for a pool); stop closes the stand-ins.
func trioModel(o *runOptions) (m llm.Model, stop func(), err error) {
	var stops []func()
	stop = func() {
		for _, f := range stops {
			f()
		}
	}
	one := func(oi *runOptions) (llm.Model, error) {
		if isStandin(oi.llmURL) {
			if o.cacheCounts == nil {
				o.cacheCounts = &cacheCounts{}
			}
			oi.cacheCounts = o.cacheCounts
			s, err := startStandin(oi, true) // the trio's: scripted, it uses the tools
			if err != nil {
				return nil, err
			}
			stops = append(stops, s)
		}
		m, url, err := newModel(oi)
		oi.llmURL = url
		return m, err
	}
	if len(o.llmURLs) <= 1 {
		m, err := one(o)
		if err != nil {
			stop()
			return nil, nil, err
		}
		return m, stop, nil
	}
	var servers []llm.PoolServer
	var urls []string
	for _, u := range o.llmURLs {
		oi := *o
		oi.llmURL = u
		m, err := one(&oi)
		if err != nil {
			stop()
			return nil, nil, err
		}
		if oi.model != o.model && o.model == "" {
			o.model = oi.model // a stand-in's default model
		}
		servers = append(servers, llm.PoolServer{Name: oi.llmURL, Model: m})
		urls = append(urls, oi.llmURL)
	}
	pool, err := llm.NewPool(llm.PoolConfig{Servers: servers})
	if err != nil {
		stop()
		return nil, nil, err
	}
	o.llmURL = strings.Join(urls, ", ")
	return pool, stop, nil
}
