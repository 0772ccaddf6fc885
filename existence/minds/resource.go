package minds

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/existence-loop/sdk/existence"
	"github.com/existence-loop/sdk/existence/toolloop/mcptools"
	"github.com/existence-loop/sdk/slot"
)

// Defaults of [ResourceConfig].
const (
	DefaultResourceImportance = 0.5
	DefaultResourceRefresh    = 5 * time.Minute
	DefaultResourceChars      = 300
)

// ErrSessionEnded is the failure of a [Resource] whose MCP server ended
// the session (it crashed, or the set was closed): the runner runs the
// mind again after its backoff, which subscribes again.
var ErrSessionEnded = errors.New("minds: the MCP server ended the session")

// ResourceConfig configures a [Resource]. Set, Server and URI are
// required.
type ResourceConfig struct {
	// Name is the mind's name and its slot's id; default "mcp:" and the
	// server's name.
	Name string
	// Title is the slot's title; default the URI.
	Title string
	// Set is the connected MCP servers (mcptools.Connect), shared with
	// the tool loop if wanted.
	Set *mcptools.Set
	// Server is the name of the server in the set; URI the resource.
	Server, URI string
	// Importance is the slot's importance, 0–1; 0 means 0.5.
	Importance float64
	// Notify posts the slot with notify_user at each update (not at the
	// first read).
	Notify bool
	// Refresh re-reads the resource this often even without a
	// notification (one may be missed, see mcptools.Set.Subscribe), by
	// the runner's clock; default 5 minutes, negative: never.
	Refresh time.Duration
	// Chars is how many characters of the resource's text the summary
	// shows, on one line; default 300 (at most 500, the slot's cap).
	Chars int
}

// Resource is a mind that follows an MCP resource through the SDK's MCP
// client: it subscribes to the resource (resources/subscribe), reads it,
// and reads it again at each update notification (and every Refresh),
// posting one slot with the start of its text. A read that fails, or a
// server that ends the session, is a failure (see existence.Mind;
// [ErrSessionEnded]); the next run subscribes again. Create it with
// [NewResource].
type Resource struct {
	cfg  ResourceConfig
	last string
	have bool
}

var _ existence.Mind = (*Resource)(nil)

// NewResource returns a Resource. Errors: [ErrConfig] for a missing Set,
// Server or URI, an invalid name, an importance out of 0–1.
func NewResource(cfg ResourceConfig) (*Resource, error) {
	if cfg.Set == nil || cfg.Server == "" || cfg.URI == "" {
		return nil, fmt.Errorf("%w: ResourceConfig needs Set, Server and URI", ErrConfig)
	}
	cfg.Name = orDefault(cfg.Name, "mcp:"+cfg.Server)
	cfg.Title = orDefault(cfg.Title, cfg.URI)
	cfg.Importance = orDefault(cfg.Importance, DefaultResourceImportance)
	cfg.Refresh = orDefault(cfg.Refresh, DefaultResourceRefresh)
	cfg.Chars = min(orDefault(cfg.Chars, DefaultResourceChars), slot.MaxSummaryChars)
	if err := checkName(cfg.Name); err != nil {
		return nil, err
	}
	if err := checkImportance(cfg.Importance); err != nil {
		return nil, err
	}
	return &Resource{cfg: cfg}, nil
}

// Name returns the mind's name (ResourceConfig.Name).
func (r *Resource) Name() string { return r.cfg.Name }

// Run subscribes, reads and posts, then reads and posts again at each
// update until ctx ends. Errors: the failures above.
func (r *Resource) Run(ctx context.Context, env existence.MindEnv) error {
	sub, err := r.cfg.Set.Subscribe(ctx, r.cfg.Server, r.cfg.URI)
	if err != nil {
		return err
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if err := sub.Close(cctx); err != nil && env.Logger != nil {
			env.Logger.Warn("unsubscribing failed", "uri", r.cfg.URI, "err", err)
		}
	}()
	// Read after subscribing, so that no change in between is missed.
	if err := r.read(ctx, env, false); err != nil {
		return err
	}
	var refresh <-chan time.Time
	if r.cfg.Refresh > 0 {
		ticks, stop := clockOf(env).NewTicker(r.cfg.Refresh)
		defer stop()
		refresh = ticks
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-sub.Done():
			return fmt.Errorf("%w (server %q, resource %s)", ErrSessionEnded, r.cfg.Server, r.cfg.URI)
		case <-sub.Updates():
			if err := r.read(ctx, env, r.cfg.Notify); err != nil {
				return err
			}
		case <-refresh:
			if err := r.read(ctx, env, r.cfg.Notify); err != nil {
				return err
			}
		}
	}
}

// read reads the resource and posts it (a refresh keeps the slot from
// going stale); with notify, a changed text is posted with notify_user.
func (r *Resource) read(ctx context.Context, env existence.MindEnv, notify bool) error {
	text, err := r.cfg.Set.ReadResource(ctx, r.cfg.Server, r.cfg.URI)
	if err != nil {
		return err
	}
	changed := r.have && text != r.last
	r.last, r.have = text, true
	summary := oneLine(text, r.cfg.Chars)
	if summary == "" {
		summary = "(empty)"
	}
	next := 0.0
	if r.cfg.Refresh > 0 {
		next = r.cfg.Refresh.Seconds()
	}
	return env.Post(ctx, slot.Slot{ID: r.cfg.Name, Title: r.cfg.Title, Status: slot.Completed, Summary: summary,
		Importance: r.cfg.Importance, Confidence: 1, NextRun: next, NotifyUser: notify && changed})
}
