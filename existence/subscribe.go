package existence

import (
	"github.com/existence-loop/sdk/existence/event"
)

// Subscribe adds fn as an observer of the agent's events, after
// [Config].Observer, and returns what removes it (calling it twice is
// harmless). It is for observers that exist only after the agent, such as
// a monitor built over it: there is no need to route events through a
// variable set later. fn is called as an [event.Observer] is: synchronously,
// from the agent's goroutines, so it must be safe for concurrent use and
// return quickly. Events emitted before Subscribe returns are not
// replayed.
func (a *Agent) Subscribe(fn func(event.Event)) (cancel func()) { return a.subs.Add(fn) }
