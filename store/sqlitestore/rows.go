package sqlitestore

import (
	"database/sql"
	"encoding/json"
	"slices"
	"time"

	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/suffering"
)

// identityDoc is the JSON of the agents.identity column: the identity
// fields that have no column or table of their own.
type identityDoc struct {
	Traits    []string           `json:"traits,omitempty"`
	Domains   []string           `json:"domains,omitempty"`
	Opinions  []identity.Opinion `json:"opinions,omitempty"`
	Questions []string           `json:"open_questions,omitempty"`
}

// agentRow is the encoded agents row of a state.
type agentRow struct {
	name, worldview, narrative string
	load                       float64
	crisis                     int
	activeGoal                 sql.NullString
	identity, suffering        string
	createdAt                  sql.NullString
	updatedAt                  string
	lastPresence               sql.NullString // AgentState.LastPresence (spec §2 "Presence"), NULL when never
	slots                      sql.NullString // AgentState.Slots as a JSON array, NULL when empty
	extra                      sql.NullString // stateExtra as a JSON object, NULL when empty
}

// stateExtra is the agents row's extra column (schema version 7): the
// parts of a state kept beside its identity.
type stateExtra struct {
	WorkingMemory     json.RawMessage `json:"working_memory,omitempty"`
	WorkingMemoryNote string          `json:"working_memory_note,omitempty"`
	Commissioned      time.Time       `json:"commissioned,omitzero"`
}

// encoded is a state ready to write: the agents row, and the child rows as
// typed values (compared with the cached ones to write what changed).
type encoded struct {
	id          string
	row         agentRow
	goals       []identity.Goal
	discoveries []identity.Discovery
	inbox, host []identity.AgentMessage
}

// cache is what this store last wrote or read for an agent: the row
// version and the child rows with their seq numbers. A save diffs against
// it; a version that moved (another process wrote) makes the save rewrite
// every child row.
type cache struct {
	exists      bool
	version     int64
	goals       []seqd[identity.Goal]
	discoveries []seqd[identity.Discovery]
	inbox, host []seqd[identity.AgentMessage]
}

// seqd is a child row value with its seq.
type seqd[T any] struct {
	seq int64
	v   T
}

// encodeState encodes a copy of s (the cache keeps its values, so they
// must not share the caller's slices).
func encodeState(s *identity.AgentState, updated time.Time) (*encoded, error) {
	s = s.Clone()
	id := &s.Identity
	idj, err := json.Marshal(identityDoc{Traits: id.Traits, Domains: id.Domains, Opinions: id.Opinions, Questions: id.Questions})
	if err != nil {
		return nil, err
	}
	sj, err := json.Marshal(&s.Suffering)
	if err != nil {
		return nil, err
	}
	e := &encoded{
		id: id.AgentID,
		row: agentRow{
			name: id.Name, worldview: id.Worldview, narrative: id.Narrative,
			load: s.Suffering.Load(), crisis: s.Suffering.CrisisCycles,
			identity: string(idj), suffering: string(sj),
			createdAt: timeCol(id.CreatedAt), updatedAt: updated.Format(time.RFC3339Nano),
			lastPresence: timeCol(s.LastPresence),
		},
		goals: id.Goals, discoveries: id.Discoveries, inbox: s.Inbox, host: s.Host,
	}
	if len(s.Slots) > 0 {
		b, err := json.Marshal(s.Slots)
		if err != nil {
			return nil, err
		}
		e.row.slots = sql.NullString{String: string(b), Valid: true}
	}
	if x := (stateExtra{s.WorkingMemory, s.WorkingMemoryNote, s.Commissioned}); len(x.WorkingMemory) > 0 || x.WorkingMemoryNote != "" || !x.Commissioned.IsZero() {
		b, err := json.Marshal(x)
		if err != nil {
			return nil, err
		}
		e.row.extra = sql.NullString{String: string(b), Valid: true}
	}
	if g := id.ActiveGoal(); g != nil {
		e.row.activeGoal = sql.NullString{String: g.Objective, Valid: true}
	}
	return e, nil
}

// timeCol is the column value of t: RFC 3339 with nanoseconds, NULL for the
// zero time.
func timeCol(t time.Time) sql.NullString {
	if t.IsZero() {
		return sql.NullString{}
	}
	return sql.NullString{String: t.Format(time.RFC3339Nano), Valid: true}
}

// parseTime reads a time column; NULL or "" is the zero time.
func parseTime(s sql.NullString) (time.Time, error) {
	if !s.Valid || s.String == "" {
		return time.Time{}, nil
	}
	return time.Parse(time.RFC3339Nano, s.String)
}

// jsonList is the column value of a string list: a JSON array, NULL when
// empty.
func jsonList(l []string) sql.NullString {
	if len(l) == 0 {
		return sql.NullString{}
	}
	b, _ := json.Marshal(l) // strings always marshal
	return sql.NullString{String: string(b), Valid: true}
}

// sameTime reports whether a and b are stored the same: the same instant
// and the same offset.
func sameTime(a, b time.Time) bool {
	if !a.Equal(b) {
		return false
	}
	_, oa := a.Zone()
	_, ob := b.Zone()
	return oa == ob && a.IsZero() == b.IsZero()
}

func sameGoal(a, b identity.Goal) bool {
	return a.ID == b.ID && a.Objective == b.Objective && a.Status == b.Status &&
		sameTime(a.Started, b.Started) && sameTime(a.Ended, b.Ended) && a.Outcome == b.Outcome &&
		a.TaskID == b.TaskID && a.Fallback == b.Fallback && a.Cause == b.Cause &&
		slices.Equal(a.BrokenTools, b.BrokenTools) && slices.Equal(a.Artifacts, b.Artifacts)
}

func sameDiscovery(a, b identity.Discovery) bool {
	return a.Text == b.Text && a.Source == b.Source && sameTime(a.At, b.At)
}

func sameMessage(a, b identity.AgentMessage) bool {
	return a.From == b.From && a.Text == b.Text && sameTime(a.At, b.At)
}

// plan is what a save does to one child table: rows to delete, rows to
// update in place (same seq), rows to insert (new seqs), and the resulting
// cache of the table.
type plan[T any] struct {
	del    []int64
	update []seqd[T]
	insert []seqd[T]
	result []seqd[T]
}

// diff plans how to turn the stored rows old into the list cur, writing
// only what changed. Lists change at their ends (the oldest entries fall
// off the front, new ones are appended, the last ones change status), so
// it aligns cur[0] with the first old row equal to it, compares row by row
// from there, deletes what is before and after, and appends the rest with
// new seqs. It is correct for any change; the alignment only decides how
// few rows are written.
func diff[T any](old []seqd[T], cur []T, same func(a, b T) bool) plan[T] {
	var p plan[T]
	k := len(old)
	if len(cur) > 0 {
		for i := range old {
			if same(old[i].v, cur[0]) {
				k = i
				break
			}
		}
	}
	for _, o := range old[:k] {
		p.del = append(p.del, o.seq)
	}
	next := int64(1)
	if n := len(old); n > 0 {
		next = old[n-1].seq + 1
	}
	p.result = make([]seqd[T], 0, len(cur))
	for i, v := range cur {
		j := k + i
		switch {
		case j < len(old) && same(old[j].v, v):
			p.result = append(p.result, old[j])
		case j < len(old):
			r := seqd[T]{old[j].seq, v}
			p.update = append(p.update, r)
			p.result = append(p.result, r)
		default:
			r := seqd[T]{next, v}
			next++
			p.insert = append(p.insert, r)
			p.result = append(p.result, r)
		}
	}
	for j := k + len(cur); j < len(old); j++ {
		p.del = append(p.del, old[j].seq)
	}
	return p
}

// decodeSuffering decodes the agents.suffering column.
func decodeSuffering(s string) (suffering.State, error) {
	var st suffering.State
	err := json.Unmarshal([]byte(s), &st)
	return st, err
}
