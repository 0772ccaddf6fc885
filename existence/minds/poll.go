package minds

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"mime"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/existence-loop/sdk/existence"
	"github.com/existence-loop/sdk/slot"
)

// Defaults of [PollConfig].
const (
	DefaultPollInterval   = 5 * time.Minute
	DefaultPollImportance = 0.5
	DefaultPollMaxBytes   = 1 << 20
)

// PollConfig configures a [Poller]. Only URL is required.
type PollConfig struct {
	// Name is the mind's name and its slot's id; default "http".
	Name string
	// Title is the slot's title; default the URL's host.
	Title string
	// URL is the http:// or https:// address fetched.
	URL string
	// Interval is the time between two fetches, by the runner's clock;
	// default 5 minutes. The slot's next_run says it.
	Interval time.Duration
	// Importance is the slot's importance, 0–1; 0 means 0.5.
	Importance float64
	// Notify posts the slot with notify_user when the content changed
	// (not at the first fetch, nor when unchanged): the agents see the
	// change at once.
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
	// Header holds headers sent with every request (e.g. Authorization).
	Header http.Header
	// MaxBytes caps a response body; default 1 MiB. A larger one is a
	// failure ([ErrTooLarge]).
	MaxBytes int64
}

// Poller is a mind that fetches a URL every interval with conditional
// requests (If-None-Match with the last ETag, If-Modified-Since with the
// last Last-Modified) and posts one slot that says what changed:
//
//	first fetch: 2,345 bytes of text/html; "Status: all systems normal"
//	changed: +1 −1 lines (2,345 → 2,351 bytes); new: "Status: degraded"
//	unchanged since 2026-11-25 14:03 UTC (2,345 bytes)
//
// A 304 Not Modified, or a body identical to the last (a server without
// validators), is unchanged. A status that is not a success (a
// [*StatusError]), a failed request or a body over MaxBytes is a failure
// (see existence.Mind). Create it with [NewPoller].
type Poller struct {
	cfg PollConfig
	f   *fetcher

	mu        sync.Mutex
	last      []byte
	sum       [32]byte
	have      bool
	changedAt time.Time
}

var _ existence.Mind = (*Poller)(nil)

// NewPoller returns a Poller. Errors: [ErrConfig] for a URL that is not
// http:// or https://, an invalid name, a negative interval, an
// importance out of 0–1.
func NewPoller(cfg PollConfig) (*Poller, error) {
	u, err := checkURL(cfg.URL)
	if err != nil {
		return nil, err
	}
	cfg.Name = orDefault(cfg.Name, "http")
	cfg.Title = orDefault(cfg.Title, u.Host)
	cfg.Interval = orDefault(cfg.Interval, DefaultPollInterval)
	cfg.Importance = orDefault(cfg.Importance, DefaultPollImportance)
	cfg.MaxBytes = orDefault(cfg.MaxBytes, DefaultPollMaxBytes)
	if err := checkName(cfg.Name); err != nil {
		return nil, err
	}
	if err := checkImportance(cfg.Importance); err != nil {
		return nil, err
	}
	if cfg.Interval < 0 || cfg.MaxBytes < 0 {
		return nil, fmt.Errorf("%w: negative Interval or MaxBytes", ErrConfig)
	}
	return &Poller{cfg: cfg, f: newFetcher(cfg.URL, cfg.Client, cfg.Header, cfg.MaxBytes, newPolicy(u, cfg.AllowRedirect, cfg.AllowPrivate))}, nil
}

// Name returns the mind's name (PollConfig.Name).
func (p *Poller) Name() string { return p.cfg.Name }

// Run fetches the URL at once and then every Interval, posting the slot
// after each fetch, until ctx ends. Errors: the failures above.
func (p *Poller) Run(ctx context.Context, env existence.MindEnv) error {
	return every(ctx, env, p.cfg.Interval, func(ctx context.Context) error { return p.round(ctx, env) })
}

func (p *Poller) round(ctx context.Context, env existence.MindEnv) error {
	r, err := p.f.get(ctx)
	if err != nil {
		return err
	}
	now := clockOf(env).Now()
	p.mu.Lock()
	var summary string
	changed := false
	switch sum := sha256.Sum256(r.body); {
	case r.notModified || (p.have && sum == p.sum):
		summary = fmt.Sprintf("unchanged since %s (%s)", stamp(p.changedAt), size(len(p.last)))
	case !p.have:
		summary = "first fetch: " + describe(r.contentType, r.body)
		p.last, p.sum, p.have, p.changedAt = r.body, sum, true, now
	default:
		summary = "changed: " + diff(p.last, r.body, r.contentType)
		p.last, p.sum, p.changedAt, changed = r.body, sum, now, true
	}
	p.mu.Unlock()
	return env.Post(ctx, slot.Slot{ID: p.cfg.Name, Title: p.cfg.Title, Status: slot.Completed, Summary: summary,
		Importance: p.cfg.Importance, Confidence: 1, NextRun: p.cfg.Interval.Seconds(), NotifyUser: p.cfg.Notify && changed})
}

// describe sums up a first body: its size and type, and its first line of
// text.
func describe(contentType string, body []byte) string {
	mt, _, _ := mime.ParseMediaType(contentType)
	s := size(len(body))
	if mt != "" {
		s += " of " + mt
	}
	if isText(contentType, body) {
		for _, line := range lines(body) {
			return s + "; " + quote(line)
		}
	}
	return s
}

// diff sums up what changed between two bodies: lines added and removed
// (counted as multisets) and the first new line, or only the sizes for a
// body that is not text.
func diff(old, cur []byte, contentType string) string {
	sizes := fmt.Sprintf("%s → %s", strings.TrimSuffix(size(len(old)), " bytes"), size(len(cur)))
	if !isText(contentType, cur) || !isText(contentType, old) {
		return sizes
	}
	before := map[string]int{}
	for _, l := range lines(old) {
		before[l]++
	}
	var added []string
	for _, l := range lines(cur) {
		if before[l] > 0 {
			before[l]--
			continue
		}
		added = append(added, l)
	}
	removed := 0
	for _, n := range before {
		removed += n
	}
	s := fmt.Sprintf("+%d −%d lines (%s)", len(added), removed, sizes)
	if len(added) > 0 {
		s += "; new: " + quote(added[0])
	}
	return s
}

// lines returns the non-blank lines of body, trimmed.
func lines(body []byte) []string {
	var out []string
	for _, l := range bytes.Split(body, []byte("\n")) {
		if t := strings.TrimSpace(string(l)); t != "" {
			out = append(out, t)
		}
	}
	return out
}

// quote quotes a line of text for a summary, cut to 160 characters.
func quote(s string) string { return `"` + oneLine(s, 160) + `"` }
