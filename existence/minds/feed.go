package minds

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/mmcdole/gofeed"

	"github.com/existence-loop/sdk/existence"
	"github.com/existence-loop/sdk/slot"
)

// Defaults of [FeedConfig].
const (
	DefaultFeedInterval   = 30 * time.Minute
	DefaultFeedImportance = 0.4
	DefaultFeedMaxBytes   = 4 << 20
)

// FeedConfig configures a [Feed]. Only URL is required.
type FeedConfig struct {
	// Name is the mind's name and its slot's id; default "feed".
	Name string
	// Title is the slot's title; default the feed's own title.
	Title string
	// URL is the http:// or https:// address of an RSS, Atom or JSON
	// feed.
	URL string
	// Interval is the time between two reads, by the runner's clock;
	// default 30 minutes (GLaDOS's news job). The slot's next_run says it.
	Interval time.Duration
	// Importance is the slot's importance, 0–1; 0 means 0.4.
	Importance float64
	// Notify posts the slot with notify_user when new items appeared (not
	// at the first read).
	Notify bool
	// Client makes the requests; default a client with a 30 s timeout
	// that keeps to AllowRedirect and AllowPrivate and ignores proxies
	// from the environment. A Client given is used as it is: its own
	// redirect and dial rules apply.
	Client *http.Client
	// AllowRedirect are the hosts (a name or address, optionally with
	// ":port") a redirect may lead to besides the configured URL's origin
	// (scheme, host and port); a redirect elsewhere fails the fetch with
	// [ErrRedirect] and is not followed. Applies to the default client.
	AllowRedirect []string
	// AllowPrivate lets the default client connect to private and
	// loopback addresses (10/8, 172.16/12, 192.168/16, 100.64/10,
	// fc00::/7, 127/8, ::1) whatever the URL's host; without it only
	// the class of a URL whose host is such an address literal (or
	// localhost) is allowed. Link-local and metadata addresses are refused
	// always ([ErrAddress]), after DNS resolution, redirect or not.
	AllowPrivate bool
	// Header holds headers sent with every request.
	Header http.Header
	// MaxBytes caps the feed's size; default 4 MiB.
	MaxBytes int64
}

// Feed is a mind that reads an RSS, Atom or JSON feed every interval
// (with github.com/mmcdole/gofeed, and conditional requests as a
// [Poller]) and posts one slot with its newest item and how many items
// are new since the last read:
//
//	newest: "Go 1.26 is released" (2026-02-11 17:00 UTC, https://go.dev/blog/go1.26); 2 new since the last read
//
// The newest item is the one published (or updated) last; without dates,
// the feed's first. A feed that does not parse, a status that is not a
// success or a body over MaxBytes is a failure (see existence.Mind).
// Create it with [NewFeed].
type Feed struct {
	cfg FeedConfig
	f   *fetcher

	mu      sync.Mutex
	seen    map[string]bool // item keys of the last read
	rounds  int
	summary string // the last summary, for a 304
	title   string
}

var _ existence.Mind = (*Feed)(nil)

// NewFeed returns a Feed. Errors: [ErrConfig] as for [NewPoller].
func NewFeed(cfg FeedConfig) (*Feed, error) {
	u, err := checkURL(cfg.URL)
	if err != nil {
		return nil, err
	}
	cfg.Name = orDefault(cfg.Name, "feed")
	cfg.Interval = orDefault(cfg.Interval, DefaultFeedInterval)
	cfg.Importance = orDefault(cfg.Importance, DefaultFeedImportance)
	cfg.MaxBytes = orDefault(cfg.MaxBytes, DefaultFeedMaxBytes)
	if err := checkName(cfg.Name); err != nil {
		return nil, err
	}
	if err := checkImportance(cfg.Importance); err != nil {
		return nil, err
	}
	if cfg.Interval < 0 || cfg.MaxBytes < 0 {
		return nil, fmt.Errorf("%w: negative Interval or MaxBytes", ErrConfig)
	}
	return &Feed{cfg: cfg, f: newFetcher(cfg.URL, cfg.Client, cfg.Header, cfg.MaxBytes, newPolicy(u, cfg.AllowRedirect, cfg.AllowPrivate))}, nil
}

// Name returns the mind's name (FeedConfig.Name).
func (f *Feed) Name() string { return f.cfg.Name }

// Run reads the feed at once and then every Interval, posting the slot
// after each read, until ctx ends. Errors: the failures above.
func (f *Feed) Run(ctx context.Context, env existence.MindEnv) error {
	return every(ctx, env, f.cfg.Interval, func(ctx context.Context) error { return f.round(ctx, env) })
}

func (f *Feed) round(ctx context.Context, env existence.MindEnv) error {
	r, err := f.f.get(ctx)
	if err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	fresh := 0
	if !r.notModified {
		feed, err := gofeed.NewParser().Parse(bytes.NewReader(r.body))
		if err != nil {
			return fmt.Errorf("feed %s: %w", f.cfg.URL, err)
		}
		f.title = strings.TrimSpace(feed.Title)
		seen := make(map[string]bool, len(feed.Items))
		for _, it := range feed.Items {
			k := itemKey(it)
			if f.rounds > 0 && !f.seen[k] {
				fresh++
			}
			seen[k] = true
		}
		f.seen = seen
		f.summary = summarize(feed, f.rounds, fresh)
		f.rounds++
	}
	title := orDefault(f.cfg.Title, orDefault(f.title, f.cfg.Name))
	return env.Post(ctx, slot.Slot{ID: f.cfg.Name, Title: title, Status: slot.Completed, Summary: f.summary,
		Importance: f.cfg.Importance, Confidence: 1, NextRun: f.cfg.Interval.Seconds(), NotifyUser: f.cfg.Notify && fresh > 0})
}

// itemKey identifies an item across reads: its GUID, else its link, else
// its title.
func itemKey(it *gofeed.Item) string {
	return orDefault(it.GUID, orDefault(it.Link, it.Title))
}

// newest returns the item published (or updated) last; without dates,
// the first.
func newest(items []*gofeed.Item) *gofeed.Item {
	var best *gofeed.Item
	var bestAt time.Time
	for _, it := range items {
		at := itemTime(it)
		if best == nil || at.After(bestAt) {
			best, bestAt = it, at
		}
	}
	return best
}

func itemTime(it *gofeed.Item) time.Time {
	switch {
	case it.PublishedParsed != nil:
		return *it.PublishedParsed
	case it.UpdatedParsed != nil:
		return *it.UpdatedParsed
	}
	return time.Time{}
}

// summarize sums up a read.
func summarize(feed *gofeed.Feed, rounds, fresh int) string {
	if len(feed.Items) == 0 {
		return "the feed has no items"
	}
	it := newest(feed.Items)
	var meta []string
	if at := itemTime(it); !at.IsZero() {
		meta = append(meta, stamp(at))
	}
	if it.Link != "" {
		meta = append(meta, oneLine(it.Link, 120))
	}
	s := "newest: " + quote(orDefault(it.Title, "(untitled)"))
	if len(meta) > 0 {
		s += " (" + strings.Join(meta, ", ") + ")"
	}
	switch {
	case rounds == 0:
		s += fmt.Sprintf("; %d items", len(feed.Items))
	case fresh == 0:
		s += "; nothing new since the last read"
	default:
		s += fmt.Sprintf("; %d new since the last read", fresh)
	}
	return s
}
