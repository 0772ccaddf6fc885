package monitor

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

	"github.com/existence-loop/sdk/existence/event"
)

// Defaults of the event stream.
const (
	// DefaultSubscriberBuffer is how many events wait for a slow stream
	// before newer ones are dropped (and reported as "dropped").
	DefaultSubscriberBuffer = 256
	// DefaultMaxSubscribers bounds the concurrent event streams.
	DefaultMaxSubscribers = 32
	// DefaultKeepAlive is the interval of ": keep-alive" comments.
	DefaultKeepAlive = 15 * time.Second
	// streamWriteTimeout bounds each write to a stream.
	streamWriteTimeout = 30 * time.Second
)

var (
	errTooManySubscribers = errors.New("too many event streams open; close one and retry")
	errHubClosed          = errors.New("the monitor is shutting down")
)

// hub fans events out to the streams without ever blocking the agents.
type hub struct {
	buffer, max int

	mu     sync.Mutex
	subs   map[*subscriber]struct{}
	closed bool
}

type subscriber struct {
	ch      chan event.Event // closed by hub.close
	dropped atomic.Uint64
}

func newHub(buffer, max int) *hub {
	if buffer <= 0 {
		buffer = DefaultSubscriberBuffer
	}
	if max <= 0 {
		max = DefaultMaxSubscribers
	}
	return &hub{buffer: buffer, max: max, subs: map[*subscriber]struct{}{}}
}

func (h *hub) publish(e event.Event) {
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
		}
	}
}

func (h *hub) subscribe() (*subscriber, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil, errHubClosed
	}
	if len(h.subs) >= h.max {
		return nil, errTooManySubscribers
	}
	s := &subscriber{ch: make(chan event.Event, h.buffer)}
	h.subs[s] = struct{}{}
	return s, nil
}

func (h *hub) unsubscribe(s *subscriber) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.subs, s)
}

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

func (h *hub) count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.subs)
}

// set parses a comma-separated, repeatable query parameter into a set; nil
// when absent (everything matches).
func set(vals []string) map[string]bool {
	var m map[string]bool
	for _, v := range vals {
		for _, k := range strings.Split(v, ",") {
			if k = strings.TrimSpace(k); k != "" {
				if m == nil {
					m = map[string]bool{}
				}
				m[k] = true
			}
		}
	}
	return m
}

// handleEvents serves GET /api/events: see the package documentation.
func (m *Monitor) handleEvents(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	agents, kinds := set(q["agent"]), set(q["kind"])
	sub, err := m.hub.subscribe()
	if err != nil {
		writeError(w, http.StatusServiceUnavailable, err.Error())
		return
	}
	defer m.hub.unsubscribe(sub)
	ticks, stop := m.clock.NewTicker(m.keepAlive)
	defer stop()

	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	st := &stream{w: w, rc: http.NewResponseController(w)}
	if st.comment("connected") != nil {
		return
	}
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
			if (agents == nil || agents[e.AgentID]) && (kinds == nil || kinds[string(e.Kind)]) {
				if st.event(string(e.Kind), streamEvent{Event: e, Line: e.String()}) != nil {
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

// streamEvent is the data of one event on the stream: the event's JSON and
// its thoughts-log line.
type streamEvent struct {
	event.Event
	// Line is the thoughts-log line (event.Event.String).
	Line string `json:"line"`
}

// stream writes server-sent events and flushes each one.
type stream struct {
	w  io.Writer
	rc *http.ResponseController
}

// event writes one "event:" / "data:" message (JSON is always one line).
func (st *stream) event(kind string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return st.write("event: %s\ndata: %s\n\n", kind, b)
}

func (st *stream) comment(text string) error { return st.write(": %s\n\n", text) }

func (st *stream) write(format string, args ...any) error {
	if err := st.rc.SetWriteDeadline(time.Now().Add(streamWriteTimeout)); err != nil && !errors.Is(err, http.ErrNotSupported) {
		return err
	}
	if _, err := fmt.Fprintf(st.w, format, args...); err != nil {
		return err
	}
	return st.rc.Flush()
}
