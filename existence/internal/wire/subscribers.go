package wire

import (
	"sync"
	"sync/atomic"

	"github.com/existence-loop/sdk/existence/event"
)

// Subscribers are the observers added after construction
// (existence.Agent.Subscribe, a runner's Subscribe). The list is copied on write, so that delivering an
// event takes no lock and a subscriber may subscribe or cancel from inside
// its own call.
type Subscribers struct {
	mu   sync.Mutex // serialises writers
	next uint64
	list atomic.Pointer[[]subscriber]
}

type subscriber struct {
	id uint64
	fn func(event.Event)
}

// Add appends fn and returns what removes it; the cancel is idempotent.
func (s *Subscribers) Add(fn func(event.Event)) (cancel func()) {
	if fn == nil {
		return func() {}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.next++
	id := s.next
	var list []subscriber
	if p := s.list.Load(); p != nil {
		list = append(list, *p...)
	}
	list = append(list, subscriber{id: id, fn: fn})
	s.list.Store(&list)
	var once sync.Once
	return func() { once.Do(func() { s.remove(id) }) }
}

func (s *Subscribers) remove(id uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.list.Load()
	if p == nil {
		return
	}
	list := make([]subscriber, 0, len(*p))
	for _, sub := range *p {
		if sub.id != id {
			list = append(list, sub)
		}
	}
	s.list.Store(&list)
}

// Any reports whether anyone is subscribed.
func (s *Subscribers) Any() bool {
	p := s.list.Load()
	return p != nil && len(*p) > 0
}

// Deliver calls every subscriber with e, in the order they subscribed.
func (s *Subscribers) Deliver(e event.Event) {
	if p := s.list.Load(); p != nil {
		for _, sub := range *p {
			sub.fn(e)
		}
	}
}
