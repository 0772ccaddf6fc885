package monitor

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/existence-loop/sdk/memory"
)

// MemoryCounts are an agent's long-term memories as GET /api/agents shows
// them, from the store's counts.
type MemoryCounts struct {
	// Memories is how many the agent has; Embedded how many have a
	// vector; Pending how many wait for one.
	Memories int `json:"memories"`
	Embedded int `json:"embedded"`
	Pending  int `json:"pending"`
}

// memoryCounts returns agent id's counts, nil without [Config].Memory or
// when the store cannot count (the error is logged: the page goes on).
func (m *Monitor) memoryCounts(r *http.Request, id string) *MemoryCounts {
	if m.cfg.Memory == nil {
		return nil
	}
	c, err := m.cfg.Memory.Store().CountMemories(r.Context(), id)
	if err != nil {
		m.log.Warn("monitor: counting memories failed", "agent", id, "err", err)
		return nil
	}
	return &MemoryCounts{Memories: c.Memories, Embedded: c.Memories - c.Pending, Pending: c.Pending}
}

// MemoryView is one memory in GET /api/agents/{id}/memories: the fields
// of a memory.Record but its vector (see there: ids, text, kind,
// importance 0–1, the important mark, UTC times, the access count).
type MemoryView struct {
	// ID, Text and Kind are the memory's id, text and kind.
	ID   string      `json:"id"`
	Text string      `json:"text"`
	Kind memory.Kind `json:"kind"`
	// Importance (0–1) and Important are the memory's importance and
	// mark.
	Importance float64 `json:"importance"`
	Important  bool    `json:"important,omitempty"`
	// Created, LastAccess and AccessCount are when it was stored, when
	// it was last recalled or stored again, and how many times.
	Created     time.Time `json:"created"`
	LastAccess  time.Time `json:"last_access"`
	AccessCount int       `json:"access_count"`
	// Pending reports a memory without a vector yet.
	Pending bool `json:"pending,omitempty"`
	// Score, Relevance (the cosine, -1–1), Recency (0–1) and Importance
	// are the parts of a recall's ranking; absent when listing.
	Score     *float64 `json:"score,omitempty"`
	Relevance *float64 `json:"relevance,omitempty"`
	Recency   *float64 `json:"recency,omitempty"`
}

// MemoriesPage is the body of GET /api/agents/{id}/memories.
type MemoriesPage struct {
	// Agent is the agent's id.
	Agent string `json:"agent"`
	// Stats are the agent's counts and embedding space.
	Stats memory.Stats `json:"stats"`
	// Query is q; without one, Memories are the newest, newest first.
	Query string `json:"query,omitempty"`
	// Fallback reports a recall whose query could not be embedded (Error
	// says why): ranked by its words, recency and importance.
	Fallback bool   `json:"fallback,omitempty"`
	Error    string `json:"error,omitempty"`
	// Memories are the memories found, best (or newest) first.
	Memories []MemoryView `json:"memories"`
}

// maxMemoriesShown bounds k.
const maxMemoriesShown = 100

// handleMemories serves GET /api/agents/{id}/memories?q=&k=: with q, the
// k (default 10) memories a recall finds for q, with the parts of their
// scores; without, the k newest. Reading never changes a memory: the
// recall peeks (no access update, no event). 404 for an unknown agent,
// 501 without [Config].Memory.
func (m *Monitor) handleMemories(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if m.cfg.Memory == nil {
		writeError(w, http.StatusNotImplemented, "this monitor has no long-term memory (monitor.Config.Memory)")
		return
	}
	if _, _, err := m.src.Detail(r.Context(), id); err != nil {
		m.sourceError(w, r, "reading the agent failed", err)
		return
	}
	q := r.URL.Query()
	k, err := intParam(q.Get("k"), 10)
	if err != nil || k < 1 || k > maxMemoriesShown {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("k must be 1 to %d", maxMemoriesShown))
		return
	}
	query := strings.TrimSpace(q.Get("q"))
	mem := m.cfg.Memory
	st, err := mem.Stats(r.Context(), id)
	if err != nil {
		m.serverError(w, r, "reading the memories failed", err)
		return
	}
	page := MemoriesPage{Agent: id, Stats: st, Query: query, Memories: []MemoryView{}}
	if query == "" {
		recs, err := mem.List(r.Context(), id)
		if err != nil {
			m.serverError(w, r, "reading the memories failed", err)
			return
		}
		slices.Reverse(recs) // newest first
		for _, rec := range recs[:min(k, len(recs))] {
			page.Memories = append(page.Memories, memoryView(rec))
		}
		writeJSON(w, http.StatusOK, page)
		return
	}
	got, err := mem.Recall(r.Context(), id, memory.Query{Text: query, K: k, Peek: true})
	if err != nil {
		m.serverError(w, r, "recalling failed", err)
		return
	}
	page.Fallback = got.Fallback
	if got.Err != nil {
		page.Error = got.Err.Error()
	}
	for _, res := range got.Results {
		v := memoryView(res.Memory)
		v.Score, v.Relevance, v.Recency = &res.Score, &res.Relevance, &res.Recency
		page.Memories = append(page.Memories, v)
	}
	writeJSON(w, http.StatusOK, page)
}

func memoryView(r memory.Record) MemoryView {
	return MemoryView{ID: r.ID, Text: r.Text, Kind: r.Kind, Importance: r.Importance, Important: r.Important,
		Created: r.Created, LastAccess: r.LastAccess, AccessCount: r.AccessCount, Pending: r.Model == ""}
}
