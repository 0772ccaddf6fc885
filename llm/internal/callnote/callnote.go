package callnote

import (
	"context"
	"sync"
)

// Note holds the server tried last.
type Note struct {
	mu     sync.Mutex
	server string
}

type key struct{}

// With returns ctx carrying a fresh note, and the note.
func With(ctx context.Context) (context.Context, *Note) {
	n := &Note{}
	return context.WithValue(ctx, key{}, n), n
}

// Server records name as the server tried last, when a trace above asked
// for it.
func Server(ctx context.Context, name string) {
	if n, ok := ctx.Value(key{}).(*Note); ok {
		n.mu.Lock()
		n.server = name
		n.mu.Unlock()
	}
}

// Last returns the server tried last, or "".
func (n *Note) Last() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.server
}
