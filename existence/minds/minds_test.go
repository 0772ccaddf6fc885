package minds_test

import (
	"context"
	"crypto/sha256"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/clock"
	"github.com/existence-loop/sdk/existence"
	"github.com/existence-loop/sdk/existence/existencetest"
	"github.com/existence-loop/sdk/existence/minds"
	"github.com/existence-loop/sdk/slot"
)

var t0 = time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)

// board is a MindEnv whose posts arrive on a channel.
type board struct {
	env   existence.MindEnv
	posts chan slot.Slot
}

func newBoard(clock clock.Clock) *board {
	b := &board{posts: make(chan slot.Slot, 64)}
	b.env = existence.MindEnv{
		Post: func(ctx context.Context, s slot.Slot) error {
			if err := s.Clean().Validate(); err != nil {
				return err
			}
			b.posts <- s
			return nil
		},
		Clock: clock,
	}
	return b
}

func (b *board) next(t *testing.T, what string) slot.Slot {
	t.Helper()
	select {
	case s := <-b.posts:
		return s
	case <-time.After(10 * time.Second):
		require.FailNow(t, "no slot posted: "+what)
	}
	return slot.Slot{}
}

// run runs m until the test ends; its error arrives on the channel.
func run(t *testing.T, m existence.Mind, env existence.MindEnv) <-chan error {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done, finished := make(chan error, 1), make(chan struct{})
	go func() {
		done <- m.Run(ctx, env)
		close(finished)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-finished:
		case <-time.After(10 * time.Second):
			t.Error("the mind did not stop with its context")
		}
	})
	return done
}

// TestWatcherReportsChanges: real files in a temporary directory: a file
// created, written, removed; a new directory with a file; hidden files
// left out; newest first.
func TestWatcherReportsChanges(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "old.txt"), []byte("x"), 0o600))
	w, err := minds.NewWatcher(minds.WatchConfig{Dir: dir, Debounce: -1})
	require.NoError(t, err)
	assert.Equal(t, "workspace", w.Name())
	b := newBoard(existencetest.NewClock(t0))
	run(t, w, b.env)
	s := b.next(t, "the start")
	assert.Equal(t, slot.Idle, s.Status)
	assert.Contains(t, s.Summary, "no change yet")

	require.NoError(t, os.WriteFile(filepath.Join(dir, ".hidden"), []byte("x"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "plan.md"), []byte("# plan"), 0o600))
	s = b.next(t, "a file created")
	assert.Equal(t, "workspace", s.ID)
	assert.Equal(t, "Workspace", s.Title)
	assert.Equal(t, slot.Status("changed"), s.Status)
	assert.True(t, strings.HasPrefix(s.Summary, "created plan.md"), s.Summary)
	assert.NotContains(t, s.Summary, "hidden")

	require.NoError(t, os.Remove(filepath.Join(dir, "old.txt")))
	require.Eventually(t, func() bool {
		select {
		case s = <-b.posts:
		default:
		}
		return strings.HasPrefix(s.Summary, "removed old.txt")
	}, 10*time.Second, time.Millisecond)
	assert.Contains(t, s.Summary, "created plan.md", "the earlier change is still listed")

	require.NoError(t, os.MkdirAll(filepath.Join(dir, "notes", "deep"), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "notes", "deep", "a.txt"), []byte("a"), 0o600))
	require.Eventually(t, func() bool {
		select {
		case s = <-b.posts:
		default:
		}
		return strings.Contains(s.Summary, "notes/deep/a.txt")
	}, 10*time.Second, time.Millisecond, "a file in a new directory")
	assert.Contains(t, s.Summary, "created notes/")

	_, err = minds.NewWatcher(minds.WatchConfig{Dir: filepath.Join(dir, "missing")})
	require.ErrorIs(t, err, minds.ErrConfig)
	_, err = minds.NewWatcher(minds.WatchConfig{Dir: dir, Name: "has space"})
	require.ErrorIs(t, err, minds.ErrConfig)
}

// TestWatcherDebounces: a burst of writes is one post, Debounce after
// the first.
func TestWatcherDebounces(t *testing.T) {
	dir := t.TempDir()
	// The debounce is real time (fsnotify's events are), so it is long
	// against the burst: five writes take about a millisecond, and a burst
	// that took half the debounce on a loaded machine could straddle two
	// periods and is not judged.
	const debounce = time.Second
	w, err := minds.NewWatcher(minds.WatchConfig{Dir: dir, Debounce: debounce, Notify: true})
	require.NoError(t, err)
	b := newBoard(existencetest.NewClock(t0))
	run(t, w, b.env)
	start := b.next(t, "the start")
	assert.False(t, start.NotifyUser, "the start notifies nobody")
	began := time.Now()
	for i := range 5 {
		require.NoError(t, os.WriteFile(filepath.Join(dir, "burst.log"), []byte(strings.Repeat("x", i+1)), 0o600))
	}
	if took := time.Since(began); took > debounce/2 {
		t.Skipf("the burst took %v, half the debounce: the machine is too loaded to tell one burst from two", took)
	}
	s := b.next(t, "the burst")
	posted := time.Now()
	assert.Equal(t, "created burst.log", s.Summary, "one path, created then written: still created")
	assert.True(t, s.NotifyUser)
	select {
	case extra := <-b.posts:
		// An event the watcher received only after the first post starts a
		// period of its own, so its post comes a debounce later at least;
		// a post sooner is the burst split in two.
		if gap := time.Since(posted); gap >= debounce {
			t.Skipf("a second post %v after the first: the watcher received the burst's events late, the machine is too loaded", gap)
		}
		assert.Fail(t, "a second post for one burst", extra.Summary)
	case <-time.After(2 * debounce): // two debounce periods of quiet
	}
}

// server serves a body with an ETag and Last-Modified, answering 304 to
// a request that names them; status, when set, is sent instead.
type server struct {
	mu      sync.Mutex
	body    string
	ctype   string
	etag    bool
	status  int
	got     []http.Header
	fromDir string
}

func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.got = append(s.got, r.Header.Clone())
	if s.status != 0 {
		http.Error(w, "down", s.status)
		return
	}
	body := s.body
	if s.fromDir != "" {
		b, err := os.ReadFile(filepath.Join(s.fromDir, strings.TrimPrefix(r.URL.Path, "/")))
		if err != nil {
			http.NotFound(w, r)
			return
		}
		body = string(b)
	}
	if s.etag {
		sum := sha256.Sum256([]byte(body))
		tag := fmt.Sprintf(`"%x"`, sum[:8])
		w.Header().Set("ETag", tag)
		if r.Header.Get("If-None-Match") == tag {
			w.WriteHeader(http.StatusNotModified)
			return
		}
	}
	w.Header().Set("Content-Type", s.ctype)
	_, _ = w.Write([]byte(body))
}

func (s *server) set(f func(s *server)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f(s)
}

func (s *server) requests() []http.Header {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]http.Header(nil), s.got...)
}

// TestPollerSumsUpChanges: a real HTTP server on loopback: the first
// fetch, an unchanged one answered 304 to If-None-Match, a change summed
// up by lines, a server without validators, and a failing status.
func TestPollerSumsUpChanges(t *testing.T) {
	srv := &server{body: "Status page\nall systems normal\n", ctype: "text/plain; charset=utf-8", etag: true}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	clock := existencetest.NewClock(t0)
	p, err := minds.NewPoller(minds.PollConfig{URL: hs.URL + "/status", Interval: time.Minute, Notify: true})
	require.NoError(t, err)
	b := newBoard(clock)
	done := run(t, p, b.env)

	s := b.next(t, "the first fetch")
	assert.Equal(t, "http", s.ID)
	assert.Equal(t, strings.TrimPrefix(hs.URL, "http://"), s.Title, "the host")
	assert.Equal(t, `first fetch: 31 bytes of text/plain; "Status page"`, s.Summary)
	assert.Equal(t, 60.0, s.NextRun)
	assert.False(t, s.NotifyUser, "the first fetch is no change")

	clock.Advance(time.Minute)
	s = b.next(t, "an unchanged fetch")
	assert.Equal(t, "unchanged since 2026-11-25 12:00 UTC (31 bytes)", s.Summary)
	assert.NotEmpty(t, srv.requests()[1].Get("If-None-Match"), "the ETag was sent back")

	srv.set(func(s *server) { s.body = "Status page\nthe database is degraded\nsince 12:01\n" })
	clock.Advance(time.Minute)
	s = b.next(t, "a change")
	assert.Equal(t, `changed: +2 −1 lines (31 → 49 bytes); new: "the database is degraded"`, s.Summary)
	assert.True(t, s.NotifyUser, "a change notifies")

	srv.set(func(s *server) { s.etag = false })
	clock.Advance(time.Minute)
	s = b.next(t, "the same body without validators")
	assert.Equal(t, "unchanged since 2026-11-25 12:02 UTC (49 bytes)", s.Summary)
	assert.False(t, s.NotifyUser)

	srv.set(func(s *server) { s.status = http.StatusServiceUnavailable })
	clock.Advance(time.Minute)
	select {
	case err := <-done:
		var se *minds.StatusError
		require.ErrorAs(t, err, &se)
		assert.ErrorIs(t, err, minds.ErrStatus)
		assert.Equal(t, 503, se.Code)
		assert.Equal(t, "GET "+hs.URL+"/status: 503 Service Unavailable", err.Error())
	case <-time.After(10 * time.Second):
		require.FailNow(t, "the failing fetch did not end the run")
	}

	for _, bad := range []minds.PollConfig{{URL: "ftp://x"}, {URL: ""}, {URL: hs.URL, Importance: 2}, {URL: hs.URL, Interval: -1}} {
		_, err := minds.NewPoller(bad)
		assert.ErrorIs(t, err, minds.ErrConfig, "%+v", bad)
	}
}

// TestPollerRefusesLargeBodies: a body over MaxBytes is a failure.
func TestPollerRefusesLargeBodies(t *testing.T) {
	hs := httptest.NewServer(&server{body: strings.Repeat("x", 100), ctype: "text/plain"})
	defer hs.Close()
	p, err := minds.NewPoller(minds.PollConfig{URL: hs.URL, MaxBytes: 10})
	require.NoError(t, err)
	err = p.Run(context.Background(), newBoard(existencetest.NewClock(t0)).env)
	require.ErrorIs(t, err, minds.ErrTooLarge)
}

// TestFeedNewestItem: an RSS file served on loopback becomes a slot with
// its newest item's title; an Atom version of the feed with one new item
// says so and notifies; a 304 keeps the summary; a feed that does not
// parse fails.
func TestFeedNewestItem(t *testing.T) {
	dir := t.TempDir()
	copyFile(t, "testdata/news.xml", filepath.Join(dir, "news.xml"))
	srv := &server{fromDir: dir, ctype: "application/rss+xml", etag: true}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	clock := existencetest.NewClock(t0)
	f, err := minds.NewFeed(minds.FeedConfig{URL: hs.URL + "/news.xml", Interval: time.Hour, Notify: true})
	require.NoError(t, err)
	b := newBoard(clock)
	done := run(t, f, b.env)

	s := b.next(t, "the first read")
	assert.Equal(t, "feed", s.ID)
	assert.Equal(t, "Workshop News", s.Title, "the feed's title")
	assert.Equal(t, `newest: "New oak delivered" (2026-11-25 08:30 UTC, http://example.invalid/oak); 3 items`, s.Summary)
	assert.Equal(t, 3600.0, s.NextRun)
	assert.False(t, s.NotifyUser)

	clock.Advance(time.Hour)
	s = b.next(t, "a 304")
	assert.Contains(t, s.Summary, `newest: "New oak delivered"`)
	assert.False(t, s.NotifyUser)

	copyFile(t, "testdata/news-more.xml", filepath.Join(dir, "news.xml"))
	clock.Advance(time.Hour)
	s = b.next(t, "an Atom feed with a new entry")
	assert.Equal(t, `newest: "Kiln fired for the first time" (2026-11-26 10:00 UTC, http://example.invalid/kiln); 1 new since the last read`, s.Summary)
	assert.True(t, s.NotifyUser)

	require.NoError(t, os.WriteFile(filepath.Join(dir, "news.xml"), []byte("<rss><channel><item>"), 0o600))
	clock.Advance(time.Hour)
	select {
	case err := <-done:
		require.Error(t, err)
		assert.Contains(t, err.Error(), "feed "+hs.URL+"/news.xml")
	case <-time.After(10 * time.Second):
		require.FailNow(t, "a broken feed did not fail")
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(to, b, 0o600))
}

// TestTimerPostsEveryInterval: at the start and at each tick of the
// runner's clock.
func TestTimerPostsEveryInterval(t *testing.T) {
	clock := existencetest.NewClock(t0)
	tm, err := minds.NewTimer(minds.TimerConfig{Every: 15 * time.Minute, Notify: true})
	require.NoError(t, err)
	b := newBoard(clock)
	run(t, tm, b.env)
	s := b.next(t, "the start")
	assert.Equal(t, "it is 2026-11-25 12:00 UTC", s.Summary)
	assert.Equal(t, 900.0, s.NextRun)
	assert.True(t, s.NotifyUser)
	clock.Advance(15 * time.Minute)
	assert.Equal(t, "it is 2026-11-25 12:15 UTC", b.next(t, "a tick").Summary)

	custom, err := minds.NewTimer(minds.TimerConfig{Name: "standup", Title: "Stand-up", Every: time.Hour, Summary: func(time.Time) string { return "say what you did" }})
	require.NoError(t, err)
	b = newBoard(clock)
	run(t, custom, b.env)
	s = b.next(t, "the start")
	assert.Equal(t, "standup", s.ID)
	assert.Equal(t, "say what you did", s.Summary)
	_, err = minds.NewTimer(minds.TimerConfig{})
	require.ErrorIs(t, err, minds.ErrConfig)
}

// TestFailingMindPostsAFailedSlot: in a runner, a poller whose server
// fails leaves a failed slot on the agent's board that says why.
func TestFailingMindPostsAFailedSlot(t *testing.T) {
	hs := httptest.NewServer(&server{status: http.StatusBadGateway})
	defer hs.Close()
	p, err := minds.NewPoller(minds.PollConfig{Name: "status-page", URL: hs.URL})
	require.NoError(t, err)
	a := agentWith(t, p)
	require.Eventually(t, func() bool {
		s, ok := slot.Find(a.Slots(), "status-page")
		return ok && s.Status == slot.Failed && strings.Contains(s.Summary, "502 Bad Gateway")
	}, 10*time.Second, time.Millisecond)
}

func TestMain(m *testing.M) {
	code := m.Run()
	if dir := serverDir; dir != "" {
		os.RemoveAll(dir)
	}
	os.Exit(code)
}
