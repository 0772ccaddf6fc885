package existence

import (
	"sync"
	"sync/atomic"

	"github.com/existence-loop/sdk/existence/event"
)

// subscribers are the observers added after construction ([Agent.Subscribe],
// [Runner.Subscribe]). The list is copied on write, so that delivering an
// event takes no lock and a subscriber may subscribe or cancel from inside
// its own call.
type subscribers struct {
	mu   sync.Mutex // serialises writers
	next uint64
	list atomic.Pointer[[]subscriber]
}

type subscriber struct {
	id uint64
	fn func(event.Event)
}

// add appends fn and returns what removes it; the cancel is idempotent.
func (s *subscribers) add(fn func(event.Event)) (cancel func()) {
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

func (s *subscribers) remove(id uint64) {
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

// any reports whether anyone is subscribed.
func (s *subscribers) any() bool {
	p := s.list.Load()
	return p != nil && len(*p) > 0
}

// deliver calls every subscriber with e, in the order they subscribed.
func (s *subscribers) deliver(e event.Event) {
	if p := s.list.Load(); p != nil {
		for _, sub := range *p {
			sub.fn(e)
		}
	}
}

// Subscribe adds fn as an observer of the agent's events, after
// [Config].Observer, and returns what removes it (calling it twice is
// harmless). It is for observers that exist only after the agent, such as
// a monitor built over it: there is no need to route events through a
// variable set later. fn is called as an [event.Observer] is: synchronously,
// from the agent's goroutines, so it must be safe for concurrent use and
// return quickly. Events emitted before Subscribe returns are not
// replayed.
func (a *Agent) Subscribe(fn func(event.Event)) (cancel func()) { return a.subs.add(fn) }

// Subscribe adds fn as an observer of the events of every agent of the
// runner, those added later included, and of its shared board and minds,
// after [RunnerConfig].Observer and each agent's own Observer; it returns
// what removes it (calling it twice is harmless). fn is called as an
// [event.Observer] is: synchronously, possibly concurrently for different
// agents, so it must be safe for concurrent use and return quickly.
func (r *Runner) Subscribe(fn func(event.Event)) (cancel func()) { return r.subs.add(fn) }
