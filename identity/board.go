package identity

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/existence-loop/sdk/internal/docfile"
	"github.com/existence-loop/sdk/slot"
)

// Document is one named document a store keeps whole, next to the agents'
// states, shared by every agent and process that uses the store: the
// shared board of slots ([SharedBoard]) and the requests to the human live
// in one. store/filestore (a file in the state directory),
// store/sqlitestore and store/pgstore (a row of their documents
// table) return one from their Document method; [NewMemoryDocument] keeps
// one in memory. Implementations are safe for concurrent use.
type Document interface {
	// Name names the document in errors, e.g.
	// "sqlite:/var/lib/trio/state.db#slots".
	Name() string
	// Load returns the stored bytes, or nil when there are none yet. It
	// sees one committed version. Errors: ctx's error, the store's.
	Load(ctx context.Context) ([]byte, error)
	// Update runs fn on the stored bytes (nil when there are none) while
	// holding a lock that excludes every other Update of the same
	// document, in any process, and stores what fn returns, durably before
	// Update returns. When fn returns nil data or an error, nothing is
	// written. Errors: fn's, ctx's, the store's.
	Update(ctx context.Context, fn func(old []byte) ([]byte, error)) error
}

// NewMemoryDocument returns a [Document] kept in memory only, named
// "memory#{name}".
func NewMemoryDocument(name string) Document { return &memoryDocument{name: "memory#" + name} }

type memoryDocument struct {
	name string
	mu   sync.Mutex
	data []byte
}

func (d *memoryDocument) Name() string { return d.name }

func (d *memoryDocument) Load(ctx context.Context) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.data), nil
}

func (d *memoryDocument) Update(ctx context.Context, fn func(old []byte) ([]byte, error)) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	data, err := fn(slices.Clone(d.data))
	if err != nil || data == nil {
		return err
	}
	d.data = slices.Clone(data)
	return nil
}

// SharedSlotsDocument is the name of the shared board's document in a
// store ("slots"; a file store keeps it in slots.shared.json).
const SharedSlotsDocument = "slots"

// MaxBoardBytes caps the shared board's document: 1 MiB (20 slots encode
// to about 20 KiB).
const MaxBoardBytes = 1 << 20

// BoardOptions configure a [SharedBoard]. The zero value gives the
// defaults.
type BoardOptions struct {
	// Max is how many slots the board keeps; default slot.DefaultMax (20).
	// Beyond it the least important slot is dropped (see slot.Put).
	Max int
	// MaxAge is how long (by Now) [SharedBoard.Cached] may answer from
	// its cache before it reads the document again; default 1 s. Put and Remove
	// through the same board update the cache at once; MaxAge bounds how
	// late an update made through another handle (another process) is
	// seen.
	MaxAge time.Duration
	// Now stamps a slot posted with a zero UpdatedAt and measures the
	// cache's age; default time.Now.
	Now func() time.Time
}

// SharedBoard is a board of slots several agents see (GLaDOS's slots
// are shared state): kept in a [Document] of the store, so that every
// process using the store sees the same board. Create it with
// [NewSharedBoard]; it is safe for concurrent use.
type SharedBoard struct {
	doc  Document
	opts BoardOptions

	mu       sync.Mutex
	cache    []slot.Slot
	cachedAt time.Time
	cached   bool
}

// NewSharedBoard returns the shared board kept in doc. Nothing is read
// until it is used.
func NewSharedBoard(doc Document, opts BoardOptions) *SharedBoard {
	if opts.Max <= 0 {
		opts.Max = slot.DefaultMax
	}
	if opts.MaxAge <= 0 {
		opts.MaxAge = time.Second
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &SharedBoard{doc: doc, opts: opts}
}

// Name returns the document's name, e.g. "sqlite:/state.db#slots".
func (b *SharedBoard) Name() string { return b.doc.Name() }

// Max returns how many slots the board keeps.
func (b *SharedBoard) Max() int { return b.opts.Max }

// boardDoc is the document: {"schema_version": 1, "slots": [...]}.
type boardDoc struct {
	SchemaVersion int         `json:"schema_version"`
	Slots         []slot.Slot `json:"slots"`
}

var boardFormat = &docfile.Format[boardDoc, slot.Slot]{
	Version: 1,
	List:    "slots",
	Fields:  func(d *boardDoc) (*int, *[]slot.Slot) { return &d.SchemaVersion, &d.Slots },
	ID:      func(s slot.Slot) string { return s.ID },
	Validate: func(s slot.Slot) error {
		if s.ID == "" {
			return errors.New("no slot_id")
		}
		return nil
	},
	Corrupt: func(path, reason string, err error) error {
		return &CorruptError{Kind: "shared board", Path: path, Reason: reason, Err: err}
	},
}

// decode reads the board from data (nil: empty).
func (b *SharedBoard) decode(data []byte) (*boardDoc, error) {
	if len(data) == 0 {
		return boardFormat.New(), nil
	}
	if len(data) > MaxBoardBytes {
		return nil, &CorruptError{Kind: "shared board", Path: b.doc.Name(), Reason: fmt.Sprintf("larger than %d bytes", MaxBoardBytes)}
	}
	return boardFormat.Decode(data, b.doc.Name())
}

// Put cleans s (slot.Slot.Clean), stamps a zero UpdatedAt with
// BoardOptions.Now, checks it (slot.Slot.Validate) and puts it on the
// board: it replaces the slot with its id, or is added; beyond Max the
// least important slots are dropped and returned (see slot.Put), s
// itself when it ranks lowest. The update is one write of the document,
// atomic against every other handle. Errors: slot.ErrInvalid (nothing
// changed); a [*CorruptError] for a document that cannot be used (left
// untouched); the store's and ctx's errors.
func (b *SharedBoard) Put(ctx context.Context, s slot.Slot) (dropped []slot.Slot, err error) {
	s = s.Clean()
	if s.UpdatedAt.IsZero() {
		s.UpdatedAt = b.opts.Now()
	}
	s.UpdatedAt = s.UpdatedAt.UTC().Round(0)
	if err := s.Validate(); err != nil {
		return nil, err
	}
	err = b.update(ctx, func(d *boardDoc) bool {
		d.Slots, dropped = slot.Put(d.Slots, s, b.opts.Max)
		return true
	})
	return dropped, err
}

// Remove removes the slot with id and reports whether there was one.
// Errors as for [SharedBoard.Put].
func (b *SharedBoard) Remove(ctx context.Context, id string) (removed bool, err error) {
	err = b.update(ctx, func(d *boardDoc) bool {
		d.Slots, removed = slot.Remove(d.Slots, id)
		return removed
	})
	return removed, err
}

// update applies fn to the stored board and writes it when fn reports a
// change; the cache follows.
func (b *SharedBoard) update(ctx context.Context, fn func(d *boardDoc) bool) error {
	var after []slot.Slot
	err := b.doc.Update(ctx, func(old []byte) ([]byte, error) {
		d, err := b.decode(old)
		if err != nil {
			return nil, err
		}
		if !fn(d) {
			after = d.Slots
			return nil, nil
		}
		data, err := boardFormat.Encode(d)
		if err != nil {
			return nil, fmt.Errorf("identity: encoding the shared board %s: %w", b.doc.Name(), err)
		}
		if len(data) > MaxBoardBytes {
			return nil, fmt.Errorf("%w: the shared board %s would be %d bytes, limit %d", ErrTooLarge, b.doc.Name(), len(data), MaxBoardBytes)
		}
		after = d.Slots
		return data, nil
	})
	if err != nil {
		return err
	}
	b.remember(after)
	return nil
}

func (b *SharedBoard) remember(slots []slot.Slot) {
	b.mu.Lock()
	b.cache, b.cachedAt, b.cached = slices.Clone(slots), b.opts.Now(), true
	b.mu.Unlock()
}

// List reads the board and returns its slots in the order first posted.
// Errors: a [*CorruptError], the store's and ctx's errors.
func (b *SharedBoard) List(ctx context.Context) ([]slot.Slot, error) {
	data, err := b.doc.Load(ctx)
	if err != nil {
		return nil, err
	}
	d, err := b.decode(data)
	if err != nil {
		return nil, err
	}
	b.remember(d.Slots)
	return slices.Clone(d.Slots), nil
}

// Cached returns the board's slots like [SharedBoard.List], from the
// cache when it is younger than BoardOptions.MaxAge (by BoardOptions.Now):
// what an agent reads every cycle. On an error it returns the last slots
// read, if any, with the error.
func (b *SharedBoard) Cached(ctx context.Context) ([]slot.Slot, error) {
	b.mu.Lock()
	if age := b.opts.Now().Sub(b.cachedAt); b.cached && age >= 0 && age < b.opts.MaxAge {
		out := slices.Clone(b.cache)
		b.mu.Unlock()
		return out, nil
	}
	last := slices.Clone(b.cache)
	b.mu.Unlock()
	out, err := b.List(ctx)
	if err != nil {
		return last, err
	}
	return out, nil
}
