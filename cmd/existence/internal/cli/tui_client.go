package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/existence-loop/sdk/existence"
	"github.com/existence-loop/sdk/existence/event"
	"github.com/existence-loop/sdk/existence/requests"
	"github.com/existence-loop/sdk/hostaccess"
	"github.com/existence-loop/sdk/monitor"
)

// monitorClient speaks to a running monitor's JSON API and event stream
// (package monitor), as the dashboard does.
type monitorClient struct {
	base  *url.URL // scheme and host, and the path the monitor is mounted under
	token string   // bearer token; "" for a monitor without one
	hc    *http.Client

	mu   sync.Mutex
	csrf string // the session's CSRF token, for POSTs without a bearer token
}

// apiError is an error answer of the monitor: its status and message.
type apiError struct {
	Status  int
	Message string
}

func (e *apiError) Error() string { return e.Message }

// newMonitorClient returns a client of the monitor at raw, an http:// or
// https:// URL. Errors: a URL that does not parse, or has another scheme
// or no host.
func newMonitorClient(raw, token string) (*monitorClient, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return nil, fmt.Errorf("%q: want the monitor's http:// or https:// address, such as http://127.0.0.1:8080", raw)
	}
	u.RawQuery, u.Fragment = "", ""
	u.Path = strings.TrimSuffix(u.Path, "/")
	// Without a bearer token, the client is a browser to the monitor: the
	// page opens a session (a cookie), and POSTs carry that session's CSRF
	// token with its cookie.
	jar, err := cookiejar.New(nil)
	if err != nil {
		return nil, err
	}
	return &monitorClient{base: u, token: token, hc: &http.Client{Jar: jar}}, nil
}

// url returns the address of path (with its query) under the monitor.
func (c *monitorClient) url(path string) string { return c.base.String() + path }

// request builds a request to the monitor, with the bearer token, or for
// a POST without one the page's CSRF token.
func (c *monitorClient) request(ctx context.Context, method, path string, body io.Reader) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, method, c.url(path), body)
	if err != nil {
		return nil, err
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	} else if method != http.MethodGet {
		tok, err := c.csrfToken(ctx)
		if err != nil {
			return nil, err
		}
		req.Header.Set(hostaccess.CSRFHeader, tok)
	}
	return req, nil
}

// do sends a JSON request (in nil: no body) and decodes a 2xx answer into
// out (nil: ignored). Errors: the transport's; an *apiError for an error
// answer.
func (c *monitorClient) do(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
	}
	req, err := c.request(ctx, method, path, body)
	if err != nil {
		return err
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 32<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode/100 != 2 {
		return answerError(resp.StatusCode, b)
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(b, out); err != nil {
		return fmt.Errorf("%s %s: the monitor's answer is not what was expected: %w", method, path, err)
	}
	return nil
}

// answerError turns an error answer into an *apiError with the monitor's
// message ({"error": "..."}), or the status when there is none.
func answerError(status int, body []byte) error {
	var eb monitor.ErrorBody
	if json.Unmarshal(body, &eb) == nil && eb.Error != "" {
		return &apiError{Status: status, Message: eb.Error}
	}
	return &apiError{Status: status, Message: fmt.Sprintf("the monitor answered %d %s", status, http.StatusText(status))}
}

// csrfMeta finds the CSRF token in the dashboard's page.
var csrfMeta = regexp.MustCompile(`<meta name="csrf-token" content="([^"]+)">`)

// csrfToken returns the token the monitor's page carries, fetched once: a
// monitor without a bearer token takes POSTs only with it.
func (c *monitorClient) csrfToken(ctx context.Context) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.csrf != "" {
		return c.csrf, nil
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.url("/"), nil)
	if err != nil {
		return "", err
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	page, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", answerError(resp.StatusCode, page)
	}
	tok := csrfToken(string(page))
	if tok == "" {
		return "", errors.New("the monitor's page has no CSRF token: is this an existence monitor?")
	}
	c.csrf = tok
	return tok, nil
}

// csrfToken returns the CSRF token of a monitor page, "" when it has none.
func csrfToken(page string) string {
	m := csrfMeta.FindStringSubmatch(page)
	if m == nil {
		return ""
	}
	return html.UnescapeString(m[1])
}

// agents returns the statuses of the monitor's agents (at most the
// monitor's largest page, 500), ordered by name so that panes keep their
// places.
func (c *monitorClient) agents(ctx context.Context) ([]existence.Status, error) {
	var page monitor.AgentsPage
	if err := c.do(ctx, http.MethodGet, fmt.Sprintf("/api/agents?sort=name&limit=%d", monitor.MaxPageSize), nil, &page); err != nil {
		return nil, err
	}
	out := make([]existence.Status, 0, len(page.Agents))
	for _, a := range page.Agents {
		out = append(out, a.Status)
	}
	return out, nil
}

// say sends a host message to the given agents, or to all.
func (c *monitorClient) say(ctx context.Context, text string, to ...string) error {
	return c.do(ctx, http.MethodPost, "/api/messages", monitor.MessageRequest{Text: text, Agents: to}, nil)
}

// pending returns the requests waiting for an answer, with their age.
func (c *monitorClient) pending(ctx context.Context) ([]monitor.RequestView, error) {
	var out struct {
		Requests []monitor.RequestView `json:"requests"`
	}
	err := c.do(ctx, http.MethodGet, "/api/requests?status=pending", nil, &out)
	return out.Requests, err
}

// answer answers request id and reports whether the answer reached the
// agent's inbox.
func (c *monitorClient) answer(ctx context.Context, id string, status requests.Status, text string) (requests.Request, bool, error) {
	var out struct {
		Request   requests.Request `json:"request"`
		Delivered bool             `json:"delivered"`
	}
	err := c.do(ctx, http.MethodPost, "/api/requests/"+url.PathEscape(id)+"/answer", monitor.AnswerRequest{Status: status, Answer: text}, &out)
	return out.Request, out.Delivered, err
}

// events reads the monitor's event stream (GET /api/events) and calls fn
// with each event and dropped with each report of events the monitor
// dropped for a slow reader, until the stream ends or ctx does. It returns
// why the stream ended (io.EOF when the monitor closed it); connected is
// called once the stream is open.
func (c *monitorClient) events(ctx context.Context, connected func(), fn func(event.Event), dropped func(n uint64)) error {
	req, err := c.request(ctx, http.MethodGet, "/api/events", nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "text/event-stream")
	resp, err := c.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		return answerError(resp.StatusCode, b)
	}
	connected()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 4<<20)
	var kind string
	var data []byte
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if len(data) > 0 {
				dispatchEvent(kind, data, fn, dropped)
			}
			kind, data = "", data[:0]
		case strings.HasPrefix(line, ":"): // a comment: connected, keep-alive
		case strings.HasPrefix(line, "event:"):
			kind = strings.TrimSpace(strings.TrimPrefix(line, "event:"))
		case strings.HasPrefix(line, "data:"):
			if len(data) > 0 {
				data = append(data, '\n')
			}
			data = append(data, strings.TrimPrefix(strings.TrimPrefix(line, "data:"), " ")...)
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	return io.EOF
}

// dispatchEvent decodes one server-sent event. Data that does not decode
// is skipped: the stream goes on.
func dispatchEvent(kind string, data []byte, fn func(event.Event), dropped func(uint64)) {
	if kind == "dropped" {
		var d struct {
			Dropped uint64 `json:"dropped"`
		}
		if json.Unmarshal(data, &d) == nil {
			dropped(d.Dropped)
		}
		return
	}
	var e event.Event
	if json.Unmarshal(data, &e) == nil && e.Kind != "" {
		fn(e)
	}
}

// remoteConsole is the console of the agents behind a monitor: typed
// lines become API calls. It knows the agents from the last poll.
type remoteConsole struct {
	c *monitorClient

	mu       sync.RWMutex
	statuses []existence.Status
}

// set replaces the agents the console knows.
func (r *remoteConsole) set(statuses []existence.Status) {
	r.mu.Lock()
	r.statuses = statuses
	r.mu.Unlock()
}

// current returns the agents of the last poll.
func (r *remoteConsole) current() []existence.Status {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.statuses
}

func (r *remoteConsole) ids() []string {
	var out []string
	for _, s := range r.current() {
		out = append(out, s.ID)
	}
	return out
}

func (r *remoteConsole) resolve(who string) string {
	for _, s := range r.current() {
		if strings.EqualFold(s.ID, who) || strings.EqualFold(s.Name, who) {
			return s.ID
		}
	}
	return ""
}

func (r *remoteConsole) name(id string) string {
	for _, s := range r.current() {
		if s.ID == id {
			return s.Name
		}
	}
	return id
}

func (r *remoteConsole) sayAsHost(ctx context.Context, text string, to ...string) error {
	return r.c.say(ctx, text, to...)
}

func (r *remoteConsole) hasRequests() bool { return true } // the monitor says when it has none

func (r *remoteConsole) pending(ctx context.Context) ([]openRequest, error) {
	views, err := r.c.pending(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]openRequest, 0, len(views))
	for _, v := range views {
		out = append(out, openRequest{v.Request, v.Created.Add(time.Duration(v.AgeSeconds * float64(time.Second)))})
	}
	return out, nil
}

func (r *remoteConsole) answer(ctx context.Context, id string, status requests.Status, text string) (requests.Request, string, error) {
	x, delivered, err := r.c.answer(ctx, id, status, text)
	if err != nil || !delivered {
		return x, "", err
	}
	return x, r.name(x.Agent), nil
}
