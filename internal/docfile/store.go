package docfile

import (
	"context"
	"sync"
)

// Store is where a document lives between calls: a [File] or [Memory].
type Store[D any] interface {
	// Lock takes the cross-process lock (a no-op in memory) and returns
	// the function that releases it. Errors: ctx's error, a lock failure.
	Lock(ctx context.Context) (unlock func(), err error)
	// Load returns a copy of the current document that the caller owns.
	// It may run without the lock and must see one complete version.
	Load() (*D, error)
}

// Update runs fn on the current document while holding sem (the
// in-process lock: a channel of capacity 1, so that waiting honours ctx)
// and s's lock, and returns fn's error. fn saves the document itself when
// it changes it. Errors: ctx's error, s's lock and load errors, fn's.
func Update[D any](ctx context.Context, sem chan struct{}, s Store[D], fn func(d *D) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	select {
	case sem <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-sem }()
	unlock, err := s.Lock(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	d, err := s.Load()
	if err != nil {
		return err
	}
	return fn(d)
}

// Memory keeps a document in memory only. Its mutex guards the document
// for readers; updates are serialised by the caller (see [Update]).
type Memory[D, T any] struct {
	format *Format[D, T]
	mu     sync.Mutex
	doc    *D
}

// NewMemory returns a Memory holding an empty document of format f.
func NewMemory[D, T any](f *Format[D, T]) *Memory[D, T] {
	return &Memory[D, T]{format: f, doc: f.New()}
}

// Lock does nothing: [Update]'s in-process lock is enough in memory.
func (m *Memory[D, T]) Lock(context.Context) (func(), error) { return func() {}, nil }

// Load returns a copy of the document; it never fails.
func (m *Memory[D, T]) Load() (*D, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.format.Clone(m.doc), nil
}

// Save replaces the document with a copy of d; it never fails.
func (m *Memory[D, T]) Save(d *D) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.doc = m.format.Clone(d)
	return nil
}
