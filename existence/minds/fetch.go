package minds

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"
)

// DefaultHTTPTimeout bounds one request of a [Poller] or a [Feed] when no
// Client is given.
const DefaultHTTPTimeout = 30 * time.Second

// ErrTooLarge matches (errors.Is) the error of a response body over the
// mind's MaxBytes.
var ErrTooLarge = errors.New("minds: response too large")

// ErrStatus matches (errors.Is) the error of an HTTP response whose
// status is not a success (2xx) nor 304 Not Modified; a [*StatusError]
// says which.
var ErrStatus = errors.New("minds: HTTP status not a success")

// StatusError is the failure of a request answered with a status that is
// not a success. It matches [ErrStatus].
type StatusError struct {
	// URL is the address fetched; Status the response's status line, e.g.
	// "503 Service Unavailable", Code its code.
	URL, Status string
	Code        int
}

// Error reads like "GET http://host/feed.xml: 503 Service Unavailable".
func (e *StatusError) Error() string { return "GET " + e.URL + ": " + e.Status }

// Is reports whether target is [ErrStatus].
func (e *StatusError) Is(target error) bool { return target == ErrStatus }

// fetcher makes conditional GET requests of one URL: it sends back the
// ETag (If-None-Match) and Last-Modified (If-Modified-Since) of the last
// success.
type fetcher struct {
	url      string
	client   *http.Client
	header   http.Header
	maxBytes int64

	etag, lastModified string
}

// fetched is one response.
type fetched struct {
	notModified bool
	body        []byte
	contentType string
}

// checkURL checks an http or https URL of a configuration.
func checkURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%w: URL %q: want an http:// or https:// address", ErrConfig, raw)
	}
	return u, nil
}

func newFetcher(raw string, client *http.Client, header http.Header, maxBytes int64, p *netPolicy) *fetcher {
	if client == nil {
		client = p.client(DefaultHTTPTimeout)
	}
	return &fetcher{url: raw, client: client, header: header.Clone(), maxBytes: maxBytes}
}

// get fetches the URL. A 304 Not Modified is notModified; a 2xx response
// gives its body. Errors: the request's ([*url.Error], ctx's), a
// [*StatusError] for another status, [ErrTooLarge] above maxBytes.
func (f *fetcher) get(ctx context.Context) (fetched, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, f.url, nil)
	if err != nil {
		return fetched{}, fmt.Errorf("GET %s: %w", f.url, err)
	}
	for k, vs := range f.header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	if f.etag != "" {
		req.Header.Set("If-None-Match", f.etag)
	}
	if f.lastModified != "" {
		req.Header.Set("If-Modified-Since", f.lastModified)
	}
	resp, err := f.client.Do(req)
	if err != nil {
		return fetched{}, err // a *url.Error names the method and the URL
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusNotModified && (f.etag != "" || f.lastModified != ""):
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
		return fetched{notModified: true}, nil
	case resp.StatusCode < 200 || resp.StatusCode > 299:
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
		return fetched{}, &StatusError{URL: f.url, Status: resp.Status, Code: resp.StatusCode}
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, f.maxBytes+1))
	if err != nil {
		return fetched{}, fmt.Errorf("GET %s: reading the body: %w", f.url, err)
	}
	if int64(len(body)) > f.maxBytes {
		return fetched{}, fmt.Errorf("GET %s: %w: over %d bytes (MaxBytes)", f.url, ErrTooLarge, f.maxBytes)
	}
	f.etag, f.lastModified = resp.Header.Get("ETag"), resp.Header.Get("Last-Modified")
	return fetched{body: body, contentType: resp.Header.Get("Content-Type")}, nil
}

// isText reports whether a body can be summed up as lines of text.
func isText(contentType string, body []byte) bool {
	mt, _, _ := mime.ParseMediaType(contentType)
	switch {
	case strings.HasPrefix(mt, "text/"), strings.HasSuffix(mt, "json"), strings.HasSuffix(mt, "xml"), mt == "":
		return utf8.Valid(body) && !bytes.ContainsRune(body, 0)
	}
	return false
}
