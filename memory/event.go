package memory

import (
	"fmt"
	"time"
)

// EventKind names what happened to an agent's memories. The strings are
// stable and the same as the existence package's event kinds, which
// carry these events to the agent's observer.
type EventKind string

// Event kinds.
const (
	// EventStored: a memory was stored (Record); a text the agent
	// already had only raised its access count (Cause "duplicate").
	EventStored EventKind = "memory_stored"
	// EventPending: a memory was stored as text without a vector, to be
	// embedded later by the backfill: Cause says why ("no_embedder",
	// "space" when the embedder's space is not the agent's, or the
	// embedding error's class: "unavailable", "http_503", "timeout", ...),
	// Err holds the error.
	EventPending EventKind = "memory_pending"
	// EventEmbedded: the backfill (or a reembed) gave Count pending
	// memories their vectors (Space).
	EventEmbedded EventKind = "memory_embedded"
	// EventBackfillFailed: a background backfill attempt failed (Err,
	// Cause its class: "unavailable", "http_503", "timeout", "space", ...);
	// it is tried again after Retry: a backoff of 2 s doubling up to 5
	// minutes, or the server's Retry-After when longer.
	EventBackfillFailed EventKind = "memory_backfill_failed"
	// EventMerged: consolidation found near-duplicates (cosine ≥
	// Config.MergeAt, same kind): Record, the newer, stands for them; IDs
	// are the older memories, now superseded by it (kept, not deleted),
	// Count how many.
	EventMerged EventKind = "memory_merged"
	// EventSuperseded: Record states a newer value of a fact (Cause
	// "fact …"); IDs are the memories of older values, now superseded by
	// it, Count how many.
	EventSuperseded EventKind = "memory_superseded"
	// EventEvicted: the agent was over its cap; IDs are the memories
	// evicted (the lowest value, never important ones), Count how many.
	EventEvicted EventKind = "memory_evicted"
	// EventRecalled: a recall returned Count memories (IDs) for Text,
	// the query.
	EventRecalled EventKind = "memory_recalled"
	// EventRecallFallback: a recall could not embed its query (no
	// embedder, or the embedder failed: Cause, Err) and ranked by recency
	// and importance only.
	EventRecallFallback EventKind = "memory_recall_fallback"
	// EventForgotten: Count memories (IDs) were forgotten on request.
	EventForgotten EventKind = "memory_forgotten"
	// EventReembedded: the agent's memories moved to a new embedding
	// space (Space); Count memories were embedded.
	EventReembedded EventKind = "memory_reembedded"
	// EventError: a store write failed after the fact (Err), such as the
	// access times of a recall; the memories in use are unaffected.
	EventError EventKind = "memory_error"
)

// Event is one thing that happened to an agent's memories. A [Memory]
// delivers it to the agent's subscriber ([Memory.Subscribe]) and to
// [Config].OnEvent.
type Event struct {
	// Kind says what happened.
	Kind EventKind `json:"kind"`
	// Time is when, by the memory's clock.
	Time time.Time `json:"time"`
	// AgentID is the agent whose memories it concerns.
	AgentID string `json:"agent_id"`
	// Text is the memory's text (stored, pending), or the query
	// (recalled, fallback).
	Text string `json:"text,omitempty"`
	// Record is the memory stored, or kept by a merge.
	Record *Record `json:"record,omitempty"`
	// IDs are the memories merged away, evicted, recalled or forgotten.
	IDs []string `json:"ids,omitempty"`
	// Count is how many memories the event concerns.
	Count int `json:"count,omitempty"`
	// Cause is a short class: why a memory is pending or a recall fell
	// back ("no_embedder", "space", or middleware.Classify's class of the
	// error), or "duplicate" on a store of a known text.
	Cause string `json:"cause,omitempty"`
	// Space is the embedding space of embedded and reembedded memories.
	Space Space `json:"space,omitzero"`
	// Retry is when a failed backfill is tried again, from Time.
	Retry time.Duration `json:"retry_ns,omitempty"`
	// Err is the error behind the event, if any (not encoded in JSON;
	// see Error).
	Err error `json:"-"`
	// Error is Err's text.
	Error string `json:"error,omitempty"`
}

// String reads like "memory_evicted scout: 2 memories".
func (e Event) String() string {
	s := fmt.Sprintf("%s %s", e.Kind, e.AgentID)
	switch {
	case e.Count > 0:
		s += fmt.Sprintf(": %d memories", e.Count)
	case e.Text != "":
		s += ": " + e.Text
	}
	if e.Cause != "" {
		s += " (" + e.Cause + ")"
	}
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Counters are a [Memory]'s running totals since it was made, over all
// agents.
type Counters struct {
	// Stored counts memories stored new; Duplicates stores of a text the
	// agent had (its access count raised instead).
	Stored, Duplicates int64
	// Pending counts memories stored without a vector; Embedded those the
	// backfill or a reembed embedded later; BackfillFailures failed
	// backfill attempts.
	Pending, Embedded, BackfillFailures int64
	// Merged counts memories merged away by consolidation; Evicted those
	// evicted over the cap.
	Merged, Evicted int64
	// Recalls counts recalls; Fallbacks those ranked without relevance.
	Recalls, Fallbacks int64
	// Forgotten counts memories forgotten on request.
	Forgotten int64
}
