package identity

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/existence-loop/sdk/slot"
	"github.com/existence-loop/sdk/suffering"
)

// AgentState is everything persisted for one agent: one document in a [Store].
// With it the loop resumes exactly where it was after a restart: the active
// goal (the last entry of Identity.Goals), the escalation clock
// (Suffering.LastEscalated) and the crisis counter (Suffering.CrisisCycles).
type AgentState struct {
	// Identity is the agent's persistent self (spec §5), goal history
	// included.
	Identity Identity `json:"identity"`
	// Suffering is the agent's stressors, active and resolved, with the
	// escalation clock and the crisis counter (spec §4).
	Suffering suffering.State `json:"suffering"`
	// Inbox holds unread peer messages, oldest first, at most Limits.Inbox.
	// Reading the inbox (an existence cycle) empties it.
	Inbox []AgentMessage `json:"inbox,omitempty"`
	// Host holds unread messages from a person (the host), oldest first.
	Host []AgentMessage `json:"host,omitempty"`
	// LastPresence is when a person was last present: the latest arrival
	// of a host message or of an assigned task (the prompt's presence
	// line, spec §2 "Presence"). Zero when never.
	LastPresence time.Time `json:"last_presence,omitzero"`
	// Slots is the agent's own board: what its minds, applications and
	// people posted for it (slot.Slot, GLaDOS's slots), in the order
	// first posted, at most the agent's cap (slot.DefaultMax, 20). The
	// prompt lists them, most important first, with those of the shared
	// board (see [SharedBoard]).
	Slots []slot.Slot `json:"slots,omitempty"`
	// WorkingMemory is the agent's working memory (agent_ecology's Plan
	// #59): a JSON object, compact, that the agent writes for itself in
	// its replies when the loop allows it (existence.Config's
	// WorkingMemory), at most that cap in bytes; nil when it has none. It
	// is apart from the identity and its caps, which it never changes.
	WorkingMemory json.RawMessage `json:"working_memory,omitempty"`
	// WorkingMemoryNote says why the working memory of the agent's last
	// reply was refused (over its cap, not an object); the next cycle
	// shows it and clears it. "" when none.
	WorkingMemoryNote string `json:"working_memory_note,omitempty"`
	// Commissioned is when the agent completed its commissioning (GSV's
	// ceremony, driven by a BOOTSTRAP.md); zero when it never did. An
	// agent commissioned once is never commissioned again.
	Commissioned time.Time `json:"commissioned,omitzero"`
	// UpdatedAt is when the state was last saved.
	UpdatedAt time.Time `json:"updated_at,omitzero"`
}

// AgentMessage is a message to an agent, from a peer (From is the peer's name) or
// from the host.
type AgentMessage struct {
	// From is the sender's display name for a peer message, e.g.
	// "Cipher", and "host" for a message from the host.
	From string `json:"from"`
	// Text is the message as sent, uncut; the prompt shows at most
	// Limits.PeerMessage (200) characters of a peer message and
	// Limits.HostMessage (500) of a host message (spec §2 rows 15–16).
	Text string `json:"text"`
	// At is when the message was delivered; the existence loop stamps a
	// zero At with its clock's time on delivery.
	At time.Time `json:"at,omitzero"`
}

// Clone returns a deep copy of s.
func (s *AgentState) Clone() *AgentState {
	c := &AgentState{
		Identity:  s.Identity.Clone(),
		Suffering: s.Suffering.Clone(),
		Inbox:     slices.Clone(s.Inbox),
		Host:      slices.Clone(s.Host),
		UpdatedAt: s.UpdatedAt,

		LastPresence: s.LastPresence,
		Slots:        slices.Clone(s.Slots),

		WorkingMemory:     bytes.Clone(s.WorkingMemory),
		WorkingMemoryNote: s.WorkingMemoryNote,
		Commissioned:      s.Commissioned,
	}
	return c
}

// Validate checks a state before it is saved or after it is loaded: a valid
// agent id ([ValidateID]) and a valid suffering state
// ([suffering.State.Validate]).
func (s *AgentState) Validate() error {
	if err := ValidateID(s.Identity.AgentID); err != nil {
		return err
	}
	if err := s.Suffering.Validate(); err != nil {
		return err // already reads "suffering: invalid stressor: active[2].severity ..."
	}
	return nil
}

// Store persists agent states, one document per agent id. Implementations
// are safe for concurrent use. Load returns a copy the caller owns; Save
// stores a copy.
type Store interface {
	// Load returns the state of agentID. Errors: [ErrNotFound] when there
	// is none, [ErrInvalidID], [ErrCorrupt] (a [*CorruptError]) when the
	// stored document cannot be used.
	Load(ctx context.Context, agentID string) (*AgentState, error)
	// Save stores s under s.Identity.AgentID, replacing the previous
	// version atomically. It returns an error wrapping [ErrInvalidID] or
	// [suffering.ErrInvalid] for a state that does not validate. s is
	// only read, and only during the call: the caller must not change it
	// until Save returns, and the store keeps no reference to it.
	Save(ctx context.Context, s *AgentState) error
	// List returns the stored agent ids in lexical order.
	List(ctx context.Context) ([]string, error)
}

// Locker is implemented by stores that can lock an agent's state against
// other processes: store/filestore (a lock file), store/sqlitestore
// and store/pgstore (a lease row). Lock returns [ErrLocked] (a
// [*LockedError]) while another holder has the agent. The existence loop
// holds the lock for as long as the agent runs; tools that write a store
// (such as hollow) take it too.
type Locker interface {
	Lock(agentID string) (unlock func() error, err error)
}

// Quarantiner is implemented by stores that can move an unusable document
// aside so that a new state can be saved, as the file, SQLite and
// PostgreSQL stores do. Quarantine returns where it went (a path, or the
// name of the row it was moved to); it never deletes anything.
type Quarantiner interface {
	Quarantine(agentID string) (newPath string, err error)
}

// Store errors.
var (
	// ErrNotFound: no state is stored for the agent.
	ErrNotFound = errors.New("identity: no stored state")
	// ErrCorrupt: a stored document is unreadable or invalid (a
	// [*CorruptError] says which and why). It is never overwritten or
	// replaced silently.
	ErrCorrupt = errors.New("corrupt document")
	// ErrLocked: another process holds the agent's state (see [Locker]).
	// A [*LockedError] says who.
	ErrLocked = errors.New("identity: agent state is locked by another process")
	// ErrTooLarge: a document exceeds the store's size limit.
	ErrTooLarge = errors.New("identity: state document too large")
	// ErrFutureVersion: a document was written by a newer schema version.
	ErrFutureVersion = errors.New("identity: state document from a newer version")
)

// CorruptError reports a stored document that cannot be used: which one,
// where, and why. It matches [ErrCorrupt] with errors.Is. It is the one
// corrupt-document error of the SDK: agent states (every [Store]), the task
// queue file (store/taskqueue) and the requests file
// (existence/requests) all report it. The document is never overwritten or
// replaced silently; it stays for a person to inspect or repair.
type CorruptError struct {
	// Kind names the document: "state document" (also when empty),
	// "queue file" or "requests file".
	Kind string
	// Path is the document's file (or the agent id for non-file stores).
	Path string
	// Reason says what is wrong, e.g. "unexpected end of JSON input" or
	// "suffering.active[2].severity is NaN".
	Reason string
	// Err is the underlying error, if any.
	Err error
}

// Error reads like "corrupt state document /state/scout.json: unexpected
// end of JSON input": the Kind ("state document" when empty), the Path and
// the Reason.
func (e *CorruptError) Error() string {
	kind := e.Kind
	if kind == "" {
		kind = "state document"
	}
	return fmt.Sprintf("corrupt %s %s: %s", kind, e.Path, e.Reason)
}

// Unwrap returns the underlying error.
func (e *CorruptError) Unwrap() error { return e.Err }

// Is reports whether target is [ErrCorrupt].
func (e *CorruptError) Is(target error) bool { return target == ErrCorrupt }

// DefaultMaxBytes is the default size limit of one state document: 4 MiB.
// A state within the default [Limits] encodes to a few tens of KiB.
const DefaultMaxBytes = 4 << 20

// SchemaVersion is the version of an [AgentState]'s stored encoding. The
// file store writes {"schema_version": 1, "state": {...}}, where state is
// an AgentState; the SQL stores record it with each row. Documents without
// a schema_version are version 0 (a bare AgentState object, as
// json.Marshal gives it) and are migrated on load; documents with a higher
// version are refused with [ErrFutureVersion].
const SchemaVersion = 1

// LockedError reports that another process (or another Lock in this
// process) holds an agent's lock (see [Locker]: the file, SQLite and
// PostgreSQL stores implement it). It matches
// [ErrLocked] with errors.Is.
type LockedError struct {
	// AgentID is the agent whose state is locked.
	AgentID string
	// Path is the lock file, Dir()/{agent id}.lock.
	Path string
	// PID is the holder's process id as written in the lock file, or 0
	// when it is unknown.
	PID int
	// Holder names the holder when the store knows more than a pid, for
	// example "host-a:4242:1a2b" for a lease row of store/sqlitestore;
	// "" for a lock file.
	Holder string
}

// Error reads like `identity: agent "scout" is already running (pid 1234);
// lock file /state/scout.lock`.
func (e *LockedError) Error() string {
	pid := "pid unknown"
	if e.PID > 0 {
		pid = "pid " + strconv.Itoa(e.PID)
	}
	if e.Holder != "" {
		return fmt.Sprintf("identity: agent %q is already running (%s, holder %s); lock in %s", e.AgentID, pid, e.Holder, e.Path)
	}
	return fmt.Sprintf("identity: agent %q is already running (%s); lock file %s", e.AgentID, pid, e.Path)
}

// Is reports whether target is [ErrLocked].
func (e *LockedError) Is(target error) bool { return target == ErrLocked }
