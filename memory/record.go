package memory

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/existence-loop/sdk/internal/agentid"
)

// Kind says where a memory came from.
type Kind string

// The kinds of memories.
const (
	// KindObservation: something the agent noticed or was told, such as a
	// note it chose to remember with the remember tool.
	KindObservation Kind = "observation"
	// KindOutcome: the result of one successful tool-loop step, "Goal
	// '{objective}' step {tool}: {result cut to 200 characters}", as the
	// original's autonomy loop stores it.
	KindOutcome Kind = "outcome"
	// KindFailure: a goal that failed or was abandoned, "FAILED: …".
	KindFailure Kind = "failure"
	// KindReflection: a summary of what a finished goal taught, such as
	// "Goal completed: …".
	KindReflection Kind = "reflection"
	// KindImported: a memory imported from another system (the
	// original's memory/semantic/{agent}/, see hollow).
	KindImported Kind = "imported"
)

// Kinds returns every kind, in the order above.
func Kinds() []Kind {
	return []Kind{KindObservation, KindOutcome, KindFailure, KindReflection, KindImported}
}

// Valid reports whether k is one of [Kinds].
func (k Kind) Valid() bool {
	switch k {
	case KindObservation, KindOutcome, KindFailure, KindReflection, KindImported:
		return true
	}
	return false
}

// DefaultImportance is the importance (0–1) a memory of kind k gets when
// its [Note] gives none: failures 0.7 (they teach what to avoid),
// reflections 0.6, observations 0.5, outcomes and imported memories 0.3.
func DefaultImportance(k Kind) float64 {
	switch k {
	case KindFailure:
		return 0.7
	case KindReflection:
		return 0.6
	case KindObservation:
		return 0.5
	default:
		return 0.3
	}
}

// Record is one long-term memory of one agent.
//
// A Record holds no reference to the store's data: stores return copies,
// and a Record given to a store is copied (Vector included).
type Record struct {
	// ID identifies the memory within its agent: "mem-" and 12 hex digits
	// for memories made here ([NewID]), the original's memory_id for
	// imported ones. 1–128 characters of ASCII letters, digits and
	// "_.:-", starting with a letter or digit.
	ID string `json:"id"`
	// AgentID is the agent whose memory it is (the rule of
	// identity.ValidateID: 1–64 of a-z 0-9 _ -, not starting with _ or -).
	AgentID string `json:"agent_id"`
	// Text is what is remembered, as given: at most [MaxTextChars]
	// characters (code points), valid UTF-8 without NUL, not blank. An
	// agent holds one memory per distinct text.
	Text string `json:"text"`
	// Kind says where the memory came from.
	Kind Kind `json:"kind"`
	// Importance is how much the memory matters, 0–1: the importance
	// part of a recall's score.
	Importance float64 `json:"importance"`
	// Important marks a memory that capacity eviction never removes and
	// consolidation never merges away.
	Important bool `json:"important,omitempty"`
	// Created is when the memory was first stored (UTC, microseconds).
	Created time.Time `json:"created"`
	// LastAccess is when it was last stored again or recalled (UTC,
	// microseconds): the recency part of a recall's score decays from it.
	LastAccess time.Time `json:"last_access"`
	// AccessCount is how many times it was recalled or stored again.
	AccessCount int `json:"access_count"`
	// Model is the embedding model of Vector, e.g. "nomic-embed-text";
	// Dimensions its length. Both are empty while the memory is pending.
	Model      string `json:"model,omitempty"`
	Dimensions int    `json:"dimensions,omitempty"`
	// Vector is the text's embedding scaled to unit length once, when it
	// was stored, so that a dot product is the cosine similarity. Nil
	// while the memory is pending: stored as text, waiting for an
	// embedding.
	Vector []float32 `json:"-"`
	// Fact names the fact the memory states, such as "deploy.target" or
	// "user.city": a newer memory of the agent naming the same fact
	// states its newer value and supersedes this one. Empty when the
	// memory names none. At most [MaxFactChars] characters, valid UTF-8
	// without NUL; set when the memory is stored, never changed.
	Fact string `json:"fact,omitempty"`
	// SupersededBy is the id of the newer memory that stands for this
	// one: a near-duplicate of the same kind, or a newer value of the
	// same Fact. Empty while the memory is current. A recall leaves
	// superseded memories out unless it asks for them
	// ([Query].Superseded); capacity eviction takes them first.
	SupersededBy string `json:"superseded_by,omitempty"`
}

// Superseded reports whether a newer memory stands for r.
func (r *Record) Superseded() bool { return r.SupersededBy != "" }

// MaxFactChars caps [Record].Fact, in characters (code points).
const MaxFactChars = 200

// Pending reports whether r has no vector yet.
func (r *Record) Pending() bool { return len(r.Vector) == 0 }

// Space returns the embedding space of r's vector; the zero Space when
// it is pending.
func (r *Record) Space() Space {
	if r.Pending() {
		return Space{}
	}
	return Space{Model: r.Model, Dimensions: r.Dimensions}
}

// Clone returns a copy of r that shares nothing with it.
func (r Record) Clone() Record {
	if r.Vector != nil {
		r.Vector = append([]float32(nil), r.Vector...)
	}
	return r
}

// MaxTextChars caps a memory's text, in characters (code points).
const MaxTextChars = 8000

// ErrInvalid: a record, note or query that cannot be stored or used; the
// error says which field and why.
var ErrInvalid = errors.New("memory: invalid")

// ErrNotFound: no memory with that id (or no agent with memories).
var ErrNotFound = errors.New("memory: not found")

var (
	idPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$`)
)

// ValidateAgentID checks an agent id by the module's one rule, that of
// identity.ValidateID (1–64 of a-z 0-9 _ -, not starting with _ or -):
// ids become file names in the file store. Errors wrap both [ErrInvalid]
// and identity.ErrInvalidID, with the same wording as identity.ValidateID.
func ValidateAgentID(id string) error {
	if err := agentid.Validate(id); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	return nil
}

// ValidateID checks a memory id: 1–128 of A-Z a-z 0-9 _ . : -, starting
// with a letter or digit. Errors wrap [ErrInvalid].
func ValidateID(id string) error {
	if !idPattern.MatchString(id) {
		return fmt.Errorf("%w: memory id %q (want 1–128 of A-Z a-z 0-9 _ . : -, starting with a letter or digit)", ErrInvalid, id)
	}
	return nil
}

// ValidateText checks a memory's text: valid UTF-8 without NUL, not
// blank, at most [MaxTextChars] characters. Errors wrap [ErrInvalid].
func ValidateText(text string) error {
	switch {
	case !utf8.ValidString(text):
		return fmt.Errorf("%w: text is not valid UTF-8", ErrInvalid)
	case strings.TrimSpace(text) == "":
		return fmt.Errorf("%w: text is blank", ErrInvalid)
	case strings.ContainsRune(text, 0):
		return fmt.Errorf("%w: text holds a NUL character (SQL text columns cannot)", ErrInvalid)
	case utf8.RuneCountInString(text) > MaxTextChars:
		return fmt.Errorf("%w: text has %d characters, more than %d", ErrInvalid, utf8.RuneCountInString(text), MaxTextChars)
	}
	return nil
}

// Validate checks what a store requires of a record before it keeps it:
// valid ids and text, a known kind, an importance in 0–1, non-zero
// Created and LastAccess, a non-negative access count, and either no
// vector (with no model and no dimensions) or a vector of Dimensions
// finite values with a model name. Errors wrap [ErrInvalid] and name the
// memory.
func (r *Record) Validate() error {
	if err := ValidateAgentID(r.AgentID); err != nil {
		return err
	}
	if err := ValidateID(r.ID); err != nil {
		return err
	}
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: memory %s of %s: %s", ErrInvalid, r.ID, r.AgentID, fmt.Sprintf(format, args...))
	}
	if err := ValidateText(r.Text); err != nil {
		return bad("%v", err)
	}
	switch {
	case !r.Kind.Valid():
		return bad("kind %q is not one of %v", r.Kind, Kinds())
	case math.IsNaN(r.Importance) || r.Importance < 0 || r.Importance > 1:
		return bad("importance %v is outside 0–1", r.Importance)
	case r.Created.IsZero() || r.LastAccess.IsZero():
		return bad("created and last access must be set")
	case r.AccessCount < 0:
		return bad("access count %d is negative", r.AccessCount)
	case !utf8.ValidString(r.Fact) || strings.ContainsRune(r.Fact, 0) || utf8.RuneCountInString(r.Fact) > MaxFactChars:
		return bad("fact %q is not valid UTF-8 of at most %d characters without NUL", r.Fact, MaxFactChars)
	case r.SupersededBy != "" && (ValidateID(r.SupersededBy) != nil || r.SupersededBy == r.ID):
		return bad("superseded by %q: not another memory's id", r.SupersededBy)
	}
	if r.Pending() {
		if r.Model != "" || r.Dimensions != 0 {
			return bad("a pending memory has no model or dimensions (got %q, %d)", r.Model, r.Dimensions)
		}
		return nil
	}
	switch {
	case strings.TrimSpace(r.Model) == "":
		return bad("a vector without a model name")
	case r.Dimensions != len(r.Vector):
		return bad("dimensions %d, but the vector has %d values", r.Dimensions, len(r.Vector))
	}
	for i, x := range r.Vector {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return bad("vector value %d is %v", i, x)
		}
	}
	return nil
}

// NewID returns a new memory id: "mem-" and 12 random hex digits, the
// original's format.
func NewID() string {
	var b [6]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return "mem-" + hex.EncodeToString(b[:])
}

// Space is an embedding space: a model and the dimensions of its
// vectors. Vectors of different spaces are never compared.
type Space struct {
	// Model is the embedding model's name, e.g. "nomic-embed-text".
	Model string `json:"model"`
	// Dimensions is the vectors' length, e.g. 768.
	Dimensions int `json:"dimensions"`
}

// IsZero reports whether s names no space.
func (s Space) IsZero() bool { return s.Model == "" && s.Dimensions == 0 }

// String reads like "nomic-embed-text (768 dimensions)".
func (s Space) String() string {
	if s.IsZero() {
		return "no embedding space"
	}
	return fmt.Sprintf("%s (%d dimensions)", s.Model, s.Dimensions)
}

// ErrSpace: a vector of one embedding space was offered to memories of
// another. See [SpaceError].
var ErrSpace = errors.New("memory: embedding spaces differ")

// SpaceError refuses a query (or a vector) whose embedding space is not
// the agent's: another model, or other dimensions. Cosines across spaces
// mean nothing, so they are never computed. It matches [ErrSpace].
type SpaceError struct {
	// AgentID is the agent whose memories were asked.
	AgentID string
	// Memories is the space of the agent's memories; Query the space of
	// what was offered.
	Memories, Query Space
}

// Error names both models and both dimensions, and the way out:
//
//	memory: agent "scout": the query is in text-embedding-3-small (1536 dimensions) but the memories are in nomic-embed-text (768 dimensions); embed the query with nomic-embed-text, or move the memories with reembed
func (e *SpaceError) Error() string {
	return fmt.Sprintf("memory: agent %q: the query is in %s but the memories are in %s; embed the query with %s, or move the memories with reembed",
		e.AgentID, e.Query, e.Memories, e.Memories.Model)
}

// Is reports whether target is [ErrSpace].
func (e *SpaceError) Is(target error) bool { return target == ErrSpace }

// Normalize returns v scaled to unit length, as a new float32 slice (the
// sum of squares is taken in float64). A zero vector, or one with a value
// that is not finite, gives an error wrapping [ErrInvalid]: it has no
// direction to compare.
func Normalize(v []float32) ([]float32, error) {
	var sum float64
	for _, x := range v {
		f := float64(x)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, fmt.Errorf("%w: vector holds %v", ErrInvalid, x)
		}
		sum += f * f
	}
	if sum == 0 || len(v) == 0 {
		return nil, fmt.Errorf("%w: a zero vector has no direction", ErrInvalid)
	}
	k := 1 / math.Sqrt(sum)
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = float32(float64(x) * k)
	}
	return out, nil
}
