// Package origin holds the SDK's redirect rule for outgoing HTTP: a
// client follows a redirect only within the origin it was configured
// with (scheme, host and port, RFC 6454 §4; a default port counts as
// given), or to a host the operator allowed, and at most 10 times. The
// model and embedding adapters (llm/ollama, llm/openai) and the minds
// (existence/minds) use it, so that a server cannot send a prompt or a
// fetch to another server.
package origin

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// ErrRedirect matches (errors.Is) a redirect that [Policy.CheckRedirect]
// refused.
var ErrRedirect = errors.New("redirect to another origin refused")

// maxRedirects is the most redirects one request follows.
const maxRedirects = 10

// RedirectError is a redirect [Policy.CheckRedirect] refused. It matches
// [ErrRedirect].
type RedirectError struct {
	// From is the URL that answered with the redirect; To where it
	// pointed; Origin the configured origin ("http://127.0.0.1:11434").
	From, To *url.URL
	Origin   string
}

// Error reads "redirect to http://127.0.0.1:9/x refused: other origin
// than http://127.0.0.1:11434 (from http://127.0.0.1:11434/api/chat)".
func (e *RedirectError) Error() string {
	return fmt.Sprintf("redirect to %s refused: other origin than %s (from %s)", e.To.Redacted(), e.Origin, e.From.Redacted())
}

// Is reports whether target is [ErrRedirect].
func (e *RedirectError) Is(target error) bool { return target == ErrRedirect }

// Policy is where a client may be redirected: its origin and the allowed
// hosts. The zero value is not usable; see [New].
type Policy struct {
	origin string          // scheme://host:port, lower case
	allow  map[string]bool // allowed hosts, lower case, with or without ":port"
}

// New returns the policy of a client configured with base: redirects
// within base's origin are followed, and to the hosts in allow (a name or
// address, optionally with ":port"; case does not matter).
func New(base *url.URL, allow []string) *Policy {
	p := &Policy{origin: Of(base), allow: map[string]bool{}}
	for _, h := range allow {
		if h = strings.ToLower(strings.TrimSpace(h)); h != "" {
			p.allow[h] = true
		}
	}
	return p
}

// Of returns u's origin as "scheme://host:port", lower case, the port
// given even when it is the scheme's default (80 for http, 443 for
// https).
func Of(u *url.URL) string {
	scheme := strings.ToLower(u.Scheme)
	port := u.Port()
	if port == "" {
		switch scheme {
		case "http":
			port = "80"
		case "https":
			port = "443"
		}
	}
	return scheme + "://" + net.JoinHostPort(strings.ToLower(u.Hostname()), port)
}

// Allowed reports whether a request to u keeps to the policy: u is on
// the origin, or its host is allowed.
func (p *Policy) Allowed(u *url.URL) bool {
	host := strings.ToLower(u.Hostname())
	return Of(u) == p.origin || p.allow[host] || p.allow[strings.ToLower(u.Host)]
}

// CheckRedirect is an http.Client's CheckRedirect: at most 10
// redirects, each to the origin or an allowed host; else a
// [*RedirectError] (the client wraps it in a *url.Error), and the
// request is not sent.
func (p *Policy) CheckRedirect(req *http.Request, via []*http.Request) error {
	if len(via) >= maxRedirects {
		return fmt.Errorf("stopped after %d redirects", maxRedirects)
	}
	if p.Allowed(req.URL) {
		return nil
	}
	return &RedirectError{From: via[len(via)-1].URL, To: req.URL, Origin: p.origin}
}

// Client returns a copy of hc (nil: a new client) whose CheckRedirect
// keeps to p first, then to hc's own CheckRedirect, if any.
func (p *Policy) Client(hc *http.Client) *http.Client {
	c := &http.Client{}
	if hc != nil {
		*c = *hc
	}
	own := c.CheckRedirect
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if err := p.CheckRedirect(req, via); err != nil {
			return err
		}
		if own != nil {
			return own(req, via)
		}
		return nil
	}
	return c
}
