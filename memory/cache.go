package memory

import (
	"slices"
	"sync"
)

// agent is one agent's memories in the cache of a [Memory]: the records
// without their vectors, and the vectors of the agent's embedding space
// in one row-major matrix, so that a recall scans contiguous memory.
type agent struct {
	mu     sync.Mutex
	id     string
	loaded bool

	recs   map[string]*entry // by id
	byText map[string]*entry
	space  Space     // the space of the matrix; zero while no memory has a vector
	mat    []float32 // len(rows) × space.Dimensions
	rows   []*entry  // row → entry
	// What a recall scores besides the cosine, per row, parallel to rows,
	// so that scoring reads contiguous memory (see syncRow).
	rowAccess []int64   // LastAccess, Unix microseconds
	rowImp    []float64 // Importance
	rowKind   []uint8   // kindIndex(Kind), | supersededBit when superseded

	sims []float32 // scratch of a recall: the cosines, one per row
	cand []int32   // scratch of a recall: the candidate rows
}

// supersededBit marks a superseded memory in rowKind.
const supersededBit = 0x80

// kindIndex numbers the kinds for the row arrays.
func kindIndex(k Kind) uint8 {
	switch k {
	case KindObservation:
		return 1
	case KindOutcome:
		return 2
	case KindFailure:
		return 3
	case KindReflection:
		return 4
	case KindImported:
		return 5
	}
	return 0
}

// syncRow copies e's access, importance and kind into its row's arrays;
// call it whenever they change.
func (a *agent) syncRow(e *entry) {
	if e.row < 0 {
		return
	}
	a.rowAccess[e.row] = e.rec.LastAccess.UnixMicro()
	a.rowImp[e.row] = e.rec.Importance
	a.rowKind[e.row] = kindIndex(e.rec.Kind)
	if e.rec.Superseded() {
		a.rowKind[e.row] |= supersededBit
	}
}

// entry is one memory in the cache.
type entry struct {
	rec   Record    // Vector is nil: the vector is row `row` of the matrix
	row   int       // -1 when the memory has no vector in the agent's space
	other []float32 // a vector of another space (rec.Model, rec.Dimensions), left by an interrupted reembed
}

// load fills the cache from the store's records. The agent's space is
// the most common space among the vectors whose model is the embedder's
// (emb), else the most common of all; memories with no vector in it are
// the backfill's to embed.
func (a *agent) load(recs []Record, emb Space) {
	a.recs = make(map[string]*entry, len(recs))
	a.byText = make(map[string]*entry, len(recs))
	a.space, a.mat, a.rows = Space{}, nil, nil
	a.space = chooseSpace(CountRecords(recs).Spaces, emb)
	n := 0
	for i := range recs {
		if !recs[i].Pending() && recs[i].Space() == a.space {
			n++
		}
	}
	a.mat = make([]float32, 0, n*a.space.Dimensions)
	a.rows = make([]*entry, 0, n)
	a.rowAccess, a.rowImp, a.rowKind = make([]int64, 0, n), make([]float64, 0, n), make([]uint8, 0, n)
	for _, r := range recs {
		a.insert(r)
	}
	a.loaded = true
}

// chooseSpace picks the agent's space from its counts (most common
// first): the first whose model is emb's (and dimensions, when emb's are
// known), else the first.
func chooseSpace(spaces []SpaceCount, emb Space) Space {
	for _, s := range spaces {
		if emb.Model != "" && s.Model == emb.Model && (emb.Dimensions == 0 || emb.Dimensions == s.Dimensions) {
			return s.Space
		}
	}
	if len(spaces) > 0 {
		return spaces[0].Space
	}
	return Space{}
}

// insert adds r to the cache (replacing a cached memory with its id) and
// returns its entry. The first vector sets the agent's space.
func (a *agent) insert(r Record) *entry {
	if old := a.recs[r.ID]; old != nil {
		a.remove(old)
	}
	vec := r.Vector
	r.Vector = nil
	e := &entry{rec: r, row: -1}
	a.recs[r.ID] = e
	a.byText[r.Text] = e
	if len(vec) > 0 {
		a.setVector(e, Space{Model: r.Model, Dimensions: r.Dimensions}, vec)
	}
	return e
}

// setVector gives e the vector vec of space sp: a row of the matrix when
// sp is the agent's space (the first vector sets it), else kept aside.
func (a *agent) setVector(e *entry, sp Space, vec []float32) {
	if a.space.IsZero() {
		a.space = sp
	}
	e.rec.Model, e.rec.Dimensions = sp.Model, sp.Dimensions
	if sp != a.space {
		if e.row >= 0 {
			a.removeRow(e)
		}
		e.other = slices.Clone(vec)
		return
	}
	e.other = nil
	d := a.space.Dimensions
	if e.row >= 0 {
		copy(a.mat[e.row*d:(e.row+1)*d], vec)
		return
	}
	e.row = len(a.rows)
	a.rows = append(a.rows, e)
	a.mat = append(a.mat, vec...)
	a.rowAccess = append(a.rowAccess, 0)
	a.rowImp = append(a.rowImp, 0)
	a.rowKind = append(a.rowKind, 0)
	a.syncRow(e)
}

// vector returns e's vector (a view into the matrix, or the vector of
// another space), nil when it has none.
func (a *agent) vector(e *entry) []float32 {
	if e.row >= 0 {
		d := a.space.Dimensions
		return a.mat[e.row*d : (e.row+1)*d : (e.row+1)*d]
	}
	return e.other
}

// record returns e as a Record with a copy of its vector.
func (a *agent) record(e *entry) Record {
	r := e.rec
	if v := a.vector(e); v != nil {
		r.Vector = slices.Clone(v)
	} else {
		r.Model, r.Dimensions = "", 0
	}
	return r
}

// remove drops e from the cache.
func (a *agent) remove(e *entry) {
	if a.recs[e.rec.ID] == e {
		delete(a.recs, e.rec.ID)
	}
	if a.byText[e.rec.Text] == e {
		delete(a.byText, e.rec.Text)
	}
	if e.row >= 0 {
		a.removeRow(e)
	}
}

// removeRow takes e's row out of the matrix: the last row moves into it.
// When no row is left the agent has no space any more: the next vector
// sets it.
func (a *agent) removeRow(e *entry) {
	d := a.space.Dimensions
	last := len(a.rows) - 1
	if e.row != last {
		copy(a.mat[e.row*d:(e.row+1)*d], a.mat[last*d:(last+1)*d])
		moved := a.rows[last]
		a.rows[e.row] = moved
		moved.row = e.row
		a.rowAccess[e.row], a.rowImp[e.row], a.rowKind[e.row] = a.rowAccess[last], a.rowImp[last], a.rowKind[last]
	}
	a.rows[last] = nil
	a.rows = a.rows[:last]
	a.mat = a.mat[:last*d]
	a.rowAccess, a.rowImp, a.rowKind = a.rowAccess[:last], a.rowImp[:last], a.rowKind[:last]
	e.row = -1
	if len(a.rows) == 0 {
		a.space, a.mat = Space{}, nil
	}
}

// needsEmbedding counts the memories with no vector in the agent's
// space.
func (a *agent) needsEmbedding() int { return len(a.recs) - len(a.rows) }

// sortRecords orders records as [Store.Memories] does.
func sortRecords(recs []Record) {
	slices.SortFunc(recs, func(x, y Record) int { return CompareRecords(&x, &y) })
}
