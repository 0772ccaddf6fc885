package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/existence-loop/sdk/existence"
)

// Defaults of the event stream.
const (
	// defaultSubscriberBuffer is how many events wait for a slow
	// subscriber before newer ones are dropped (and counted).
	defaultSubscriberBuffer = 256
	// defaultMaxSubscribers bounds the concurrent GET /events streams.
	defaultMaxSubscribers = 32
	// defaultKeepAlive is the interval of the ": keep-alive" comments that
	// keep proxies from closing an idle stream.
	defaultKeepAlive = 15 * time.Second
	// streamWriteTimeout bounds each write to an event stream, so that a
	// client that stopped reading cannot hold its handler forever.
	streamWriteTimeout = 30 * time.Second
)

// errTooManySubscribers is returned by hub.subscribe beyond its limit.
var errTooManySubscribers = errors.New("too many event subscribers")

// errHubClosed is returned by hub.subscribe after hub.close.
var errHubClosed = errors.New("the server is shutting down")

// hub fans existence events out to the event-stream subscribers. Publish
// never blocks: each subscriber has a bounded buffer, and events that do not
// fit are dropped and counted for that subscriber (the stream then reports
// them as a "dropped" event). It is safe for concurrent use.
type hub struct {
	buffer int
	max    int

	mu     sync.Mutex
	subs   map[*subscriber]struct{}
	closed bool

	dropped atomic.Uint64 // total over all subscribers
}

// subscriber is one event stream's queue.
type subscriber struct {
	ch      chan existence.Event // closed by hub.close
	dropped atomic.Uint64        // events lost since the stream last reported
}

// newHub returns a hub whose subscribers buffer up to buffer events, with
// at most maxSubs subscribers at a time (zero or negative: the defaults).
func newHub(buffer, maxSubs int) *hub {
	if buffer <= 0 {
		buffer = defaultSubscriberBuffer
	}
	if maxSubs <= 0 {
		maxSubs = defaultMaxSubscribers
	}
	return &hub{buffer: buffer, max: maxSubs, subs: map[*subscriber]struct{}{}}
}

// publish delivers e to every subscriber without blocking; it is an
// [existence.Observer]. After close it does nothing.
func (h *hub) publish(e existence.Event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return
	}
	for s := range h.subs {
		select {
		case s.ch <- e:
		default:
			s.dropped.Add(1)
			h.dropped.Add(1)
		}
	}
}

// subscribe adds a subscriber. Errors: errTooManySubscribers, errHubClosed.
func (h *hub) subscribe() (*subscriber, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil, errHubClosed
	}
	if len(h.subs) >= h.max {
		return nil, errTooManySubscribers
	}
	s := &subscriber{ch: make(chan existence.Event, h.buffer)}
	h.subs[s] = struct{}{}
	return s, nil
}

// unsubscribe removes s; it is safe to call after close and more than once.
func (h *hub) unsubscribe(s *subscriber) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.subs, s)
}

// close ends every stream: the subscribers' channels are closed once their
// buffered events are read, and new subscriptions are refused. It is
// idempotent.
func (h *hub) close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return
	}
	h.closed = true
	for s := range h.subs {
		close(s.ch)
	}
	h.subs = map[*subscriber]struct{}{}
}

// subscribers returns the number of current subscribers.
func (h *hub) subscribers() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.subs)
}

// handleEvents serves GET /events: a text/event-stream with one message per
// event,
//
//	event: goal_chosen
//	data: {"kind":"goal_chosen","time":"…","agent_id":"agent","agent":"Wren","text":"…"}
//
// a ": keep-alive" comment every keep-alive interval, and, after events were
// dropped for this slow client, "event: dropped" with data {"dropped": n}.
// The query parameter kind (comma-separated, repeatable) keeps only those
// kinds. The stream ends when the client goes away or the server shuts down.
func (s *server) handleEvents(w http.ResponseWriter, r *http.Request) {
	kinds := map[existence.EventKind]bool{}
	for _, v := range r.URL.Query()["kind"] {
		for _, k := range strings.Split(v, ",") {
			if k = strings.TrimSpace(k); k != "" {
				kinds[existence.EventKind(k)] = true
			}
		}
	}
	sub, err := s.events.subscribe()
	if err != nil {
		writeError(w, http.StatusServiceUnavailable, err.Error())
		return
	}
	defer s.events.unsubscribe(sub)
	// The ticker starts before the headers go out, so that a client that
	// has the headers is subscribed and on the keep-alive schedule.
	ticks, stopTicks := s.clock.NewTicker(s.keepAlive)
	defer stopTicks()

	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no") // no proxy buffering (nginx)
	w.WriteHeader(http.StatusOK)
	st := &stream{w: w, rc: http.NewResponseController(w)}
	if st.comment("connected") != nil {
		return
	}
	s.stream(r, st, sub, ticks, kinds)
}

// stream copies events from sub to st until the request ends, sub is
// closed (server shutdown), or a write fails.
func (s *server) stream(r *http.Request, st *stream, sub *subscriber, ticks <-chan time.Time, kinds map[existence.EventKind]bool) {
	for {
		select {
		case <-r.Context().Done():
			return
		case <-ticks:
			if st.comment("keep-alive") != nil {
				return
			}
		case e, ok := <-sub.ch:
			if !ok {
				return
			}
			if len(kinds) == 0 || kinds[e.Kind] {
				if err := st.event(string(e.Kind), e); err != nil {
					s.log.Debug("event stream ended", "err", err)
					return
				}
			}
			if n := sub.dropped.Swap(0); n > 0 {
				if st.event("dropped", map[string]uint64{"dropped": n}) != nil {
					return
				}
			}
		}
	}
}

// stream writes server-sent events and flushes each one.
type stream struct {
	w  io.Writer
	rc *http.ResponseController
}

// event writes one "event:" / "data:" message. JSON never contains a raw
// newline, so the data is always one line.
func (st *stream) event(kind string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return st.write("event: %s\ndata: %s\n\n", kind, b)
}

// comment writes an SSE comment line, which clients ignore.
func (st *stream) comment(text string) error {
	return st.write(": %s\n\n", text)
}

func (st *stream) write(format string, args ...any) error {
	// A deadline per write: a stuck client fails its own stream, nothing
	// else. Recorders and other writers without deadlines are fine.
	if err := st.rc.SetWriteDeadline(time.Now().Add(streamWriteTimeout)); err != nil && !errors.Is(err, http.ErrNotSupported) {
		return err
	}
	if _, err := fmt.Fprintf(st.w, format, args...); err != nil {
		return err
	}
	return st.rc.Flush()
}
