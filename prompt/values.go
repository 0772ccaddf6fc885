package prompt

import "sync"

// Key is a typed key for application data that custom sections read from a
// [View], without the SDK knowing the type. Create one per datum, usually as
// a package-level variable:
//
//	var Memory = prompt.NewKey[WorkingMemory]("working_memory")
//
//	Memory.Set(values, wm)     // the application
//	wm, ok := Memory.Get(view) // a section's Render
//
// Keys compare by identity: two keys with the same name are different keys.
type Key[T any] struct{ k *keyName }

type keyName struct{ name string }

// NewKey returns a new key. name is for diagnostics only.
func NewKey[T any](name string) Key[T] { return Key[T]{&keyName{name}} }

// Name returns the name the key was created with.
func (k Key[T]) Name() string {
	if k.k == nil {
		return ""
	}
	return k.k.name
}

// Get returns the value stored under k in v.Values, and whether there was
// one (false also for a nil View or nil Values).
func (k Key[T]) Get(v *View) (T, bool) {
	var zero T
	if v == nil || v.Values == nil || k.k == nil {
		return zero, false
	}
	x, ok := v.Values.load(k.k)
	if !ok {
		return zero, false
	}
	t, ok := x.(T)
	return t, ok
}

// Values holds application data for custom sections, keyed by [Key]. It is
// safe for concurrent use; the zero value is empty and ready to use.
type Values struct {
	mu sync.RWMutex
	m  map[*keyName]any
}

// Set stores val under k in vs. A nil vs is a no-op. (A method, like
// [Key.Get], so that the key's type parameter checks val.)
func (k Key[T]) Set(vs *Values, val T) {
	if vs == nil || k.k == nil {
		return
	}
	vs.mu.Lock()
	defer vs.mu.Unlock()
	if vs.m == nil {
		vs.m = map[*keyName]any{}
	}
	vs.m[k.k] = val
}

// Delete removes the value stored under k from vs. A nil vs is a no-op.
func (k Key[T]) Delete(vs *Values) {
	if vs == nil || k.k == nil {
		return
	}
	vs.mu.Lock()
	defer vs.mu.Unlock()
	delete(vs.m, k.k)
}

func (vs *Values) load(k *keyName) (any, bool) {
	vs.mu.RLock()
	defer vs.mu.RUnlock()
	x, ok := vs.m[k]
	return x, ok
}
