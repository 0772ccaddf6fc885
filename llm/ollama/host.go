package ollama

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"

	"github.com/existence-loop/sdk/internal/origin"
	"github.com/existence-loop/sdk/llm/middleware"
)

// resolveURL returns the server's base URL from the configured value, else
// $OLLAMA_HOST, else DefaultURL. It follows OLLAMA_HOST's conventions: no
// scheme means http, and a scheme-less host without a port gets 11434.
func resolveURL(configured string) (*url.URL, error) {
	raw := strings.TrimSpace(configured)
	from := "Config.URL"
	if raw == "" {
		raw = strings.TrimSpace(os.Getenv("OLLAMA_HOST"))
		from = "OLLAMA_HOST"
	}
	if raw == "" {
		raw = DefaultURL
		from = "the default URL"
	}
	u, err := parseHost(raw)
	if err != nil {
		return nil, fmt.Errorf("ollama: %s %q: %w", from, raw, err)
	}
	return u, nil
}

func parseHost(raw string) (*url.URL, error) {
	withScheme := raw
	schemeless := !strings.Contains(raw, "://")
	if schemeless {
		withScheme = "http://" + raw
	}
	u, err := url.Parse(withScheme)
	if err != nil {
		return nil, fmt.Errorf("not a valid URL: %w", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("scheme %q is not http or https", u.Scheme)
	}
	if u.Hostname() == "" {
		return nil, errors.New("no host (want e.g. http://127.0.0.1:11434)")
	}
	if strings.HasSuffix(u.Host, ":") {
		// "http://127.0.0.1:" would silently go to port 80.
		return nil, errors.New("empty port after \":\" (give the port, e.g. :11434, or drop the colon)")
	}
	if u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return nil, errors.New("a base URL takes no user info, query or fragment")
	}
	if schemeless && u.Port() == "" {
		u.Host = net.JoinHostPort(u.Hostname(), "11434")
	}
	u.Path = strings.TrimRight(u.Path, "/")
	u.RawPath = ""
	return u, nil
}

// httpClient returns the client the adapter sends with: a copy of hc (nil:
// a client without a timeout, the context bounding each call) whose
// replies are capped (middleware.LimitReplies), whose exchanges are recorded
// (transport), and which follows no redirect to another origin than
// base's but to the hosts in allow (internal/origin).
func httpClient(base *url.URL, hc *http.Client, allow []string) *http.Client {
	c := origin.New(base, allow).Client(hc)
	c.Transport = &transport{base: middleware.LimitReplies(c.Transport, middleware.SmallReplyLimit)}
	return c
}
