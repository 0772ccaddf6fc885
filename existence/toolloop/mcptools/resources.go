package mcptools

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/existence-loop/sdk/internal/runes"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ReadResource reads the resource at uri from the named server of the set
// and returns its text: the text of every content, joined by newlines,
// without the code points of the SDK's unsafe-character rule; binary
// contents are replaced by a note saying how many bytes were left out. A server that crashed is started again first, after its backoff,
// as for tool calls. Errors: [ErrConfig] for a server the set does not
// have; a [*DownError] while the server waits for its backoff; [ErrClosed];
// [ErrTooLarge] above the server's MaxResultBytes; the server's errors
// (for example a resource it does not have), wrapped with the server's
// name and the uri.
func (s *Set) ReadResource(ctx context.Context, server, uri string) (string, error) {
	srv, err := s.server(server)
	if err != nil {
		return "", err
	}
	sess, err := srv.session(ctx)
	if err != nil {
		return "", err
	}
	cctx, cancel := context.WithTimeout(ctx, time.Duration(srv.cfg.Timeout))
	defer cancel()
	res, err := sess.ReadResource(cctx, &mcp.ReadResourceParams{URI: uri})
	if err != nil {
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		if errors.Is(err, mcp.ErrConnectionClosed) {
			srv.lost(sess, err)
		}
		return "", fmt.Errorf("MCP server %q: reading resource %s: %w", srv.cfg.Name, uri, err)
	}
	var parts []string
	for _, c := range res.Contents {
		if c == nil {
			continue
		}
		if c.Text != "" || len(c.Blob) == 0 {
			parts = append(parts, c.Text)
			continue
		}
		parts = append(parts, fmt.Sprintf("[%d bytes of %s left out]", len(c.Blob), c.MIMEType))
	}
	// Resource text reaches models (a mind posts it in a slot): the unsafe
	// rule applies where it enters.
	text := runes.Strip(strings.Join(parts, "\n"))
	if len(text) > srv.cfg.MaxResultBytes {
		return "", fmt.Errorf("MCP server %q: resource %s: %w: %d bytes, the limit is %d", srv.cfg.Name, uri, ErrTooLarge, len(text), srv.cfg.MaxResultBytes)
	}
	srv.succeeded()
	return text, nil
}

// server returns the configured server called name.
func (s *Set) server(name string) (*server, error) {
	for _, srv := range s.servers {
		if srv.cfg.Name == name {
			return srv, nil
		}
	}
	return nil, fmt.Errorf("%w: no MCP server %q in the set", ErrConfig, name)
}

// Subscription is a subscription to the updates of one resource of one
// server (MCP resources/subscribe), made with [Set.Subscribe]. It lasts as
// long as the server's session: when the server crashes or the set is
// closed, Done is closed, and a new subscription must be made (after the
// server's backoff). It is safe for concurrent use.
type Subscription struct {
	srv     *server
	sess    *mcp.ClientSession
	uri     string
	updates chan struct{}
	done    chan struct{}
	once    sync.Once
}

// Subscribe asks the named server for updates of the resource at uri
// (MCP resources/subscribe). Each time the server says the resource
// changed (notifications/resources/updated for uri, or for a resource
// under it), a value arrives on Updates; updates that arrive before the
// last one was received are merged into it.
//
// Under the MCP protocol of 2026-07-28 (subscriptions/listen) the server
// may register the subscription a moment after Subscribe returns: read
// the resource after subscribing, not before, so that a change in between
// is not missed, and re-read it now and then if a missed notification
// matters. Errors: those of
// [Set.ReadResource], and the server's refusal (a server that does not
// support subscriptions).
func (s *Set) Subscribe(ctx context.Context, server, uri string) (*Subscription, error) {
	srv, err := s.server(server)
	if err != nil {
		return nil, err
	}
	sess, err := srv.session(ctx)
	if err != nil {
		return nil, err
	}
	sub := &Subscription{srv: srv, sess: sess, uri: uri, updates: make(chan struct{}, 1), done: make(chan struct{})}
	srv.subs.add(sub)
	cctx, cancel := context.WithTimeout(ctx, time.Duration(srv.cfg.Timeout))
	defer cancel()
	if err := sess.Subscribe(cctx, &mcp.SubscribeParams{URI: uri}); err != nil {
		srv.subs.remove(sub)
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("MCP server %q: subscribing to resource %s: %w", srv.cfg.Name, uri, err)
	}
	go func() {
		select {
		case <-sub.done:
		case <-waitDone(sess):
			sub.end()
		}
	}()
	return sub, nil
}

// waitDone returns a channel closed when sess ends.
func waitDone(sess *mcp.ClientSession) <-chan struct{} {
	ch := make(chan struct{})
	go func() {
		_ = sess.Wait() // the end itself is the news; its cause is reported by the set
		close(ch)
	}()
	return ch
}

// Updates delivers a value each time the resource changed.
func (s *Subscription) Updates() <-chan struct{} { return s.updates }

// Done is closed when the subscription ends: the server's session ended
// (a crash, [Set.Close]) or [Subscription.Close] was called.
func (s *Subscription) Done() <-chan struct{} { return s.done }

// URI returns the subscribed resource.
func (s *Subscription) URI() string { return s.uri }

func (s *Subscription) end() {
	s.once.Do(func() {
		s.srv.subs.remove(s)
		close(s.done)
	})
}

// Close ends the subscription and asks the server to stop sending updates
// (resources/unsubscribe, within ctx), unless its session has already
// ended. Errors: the server's answer to the unsubscription.
func (s *Subscription) Close(ctx context.Context) error {
	select {
	case <-s.done:
		return nil
	default:
	}
	s.end()
	if err := s.sess.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: s.uri}); err != nil && !errors.Is(err, mcp.ErrConnectionClosed) {
		return fmt.Errorf("MCP server %q: unsubscribing from resource %s: %w", s.srv.cfg.Name, s.uri, err)
	}
	return nil
}

// subscriptions are a server's live subscriptions, which its sessions'
// resource-updated notifications are routed to.
type subscriptions struct {
	mu  sync.Mutex
	all map[*Subscription]struct{}
}

func (r *subscriptions) add(s *Subscription) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.all == nil {
		r.all = map[*Subscription]struct{}{}
	}
	r.all[s] = struct{}{}
}

func (r *subscriptions) remove(s *Subscription) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.all, s)
}

// updated routes a notifications/resources/updated of a session to the
// subscriptions it concerns: the same session, and the uri or one under
// it.
func (r *subscriptions) updated(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
	if req == nil || req.Params == nil {
		return
	}
	uri := req.Params.URI
	r.mu.Lock()
	defer r.mu.Unlock()
	for s := range r.all {
		if s.sess != req.Session || (uri != s.uri && !strings.HasPrefix(uri, strings.TrimSuffix(s.uri, "/")+"/")) {
			continue
		}
		select {
		case s.updates <- struct{}{}:
		default: // one is pending: merged
		}
	}
}
