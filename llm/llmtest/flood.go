package llmtest

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sync/atomic"
)

// Flood is a hostile stand-in server: every request, on any path, gets a
// 200 reply of Bytes bytes, streamed as fast as the client reads: Prefix
// (e.g. `{"embeddings":[[`), then "0.125," repeated. It tells whether a
// client caps what it reads: a client without a cap allocates the whole
// reply. Start it with [NewFlood].
type Flood struct {
	*httptest.Server
	// Bytes is the reply's size in bytes; Prefix its start.
	Bytes  int64
	Prefix string
	// sent counts the bytes written over all replies.
	sent atomic.Int64
}

// NewFlood starts a Flood on a loopback port; Close it when done.
func NewFlood(prefix string, n int64) *Flood {
	f := &Flood{Bytes: n, Prefix: prefix}
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	return f
}

// Sent returns the bytes the server wrote so far, over all replies: a
// client that stops reading at its cap makes it stop soon after.
func (f *Flood) Sent() int64 { return f.sent.Load() }

func (f *Flood) serve(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	chunk := bytes.Repeat([]byte("0.125,"), 64<<10/6)
	left := f.Bytes
	n, err := w.Write([]byte(f.Prefix))
	f.sent.Add(int64(n))
	left -= int64(n)
	for left > 0 && err == nil && r.Context().Err() == nil {
		c := chunk
		if int64(len(c)) > left {
			c = c[:left]
		}
		n, err = w.Write(c)
		f.sent.Add(int64(n))
		left -= int64(n)
	}
}

// Allocated returns the bytes the process allocated while f ran
// (runtime.MemStats.TotalAlloc, which counts what was freed since too: a
// bound on the peak f caused, whatever the garbage collector did).
func Allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}
