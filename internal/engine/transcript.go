package engine

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
)

// Transcript is what an engine answered during one test: every HTTP
// exchange, in order, with the timings stripped (durations, timestamps,
// generated ids; see [Strip]). Transcripts live in the test package's
// testdata/engine/NAME.json; [Server.Record] writes them and [Replay]
// serves them again, so that the quick tests check the adapters against
// real server behaviour without the engine (the httprr idea).
type Transcript struct {
	// Engine is [LlamaCpp] or [Ollama], the engine that answered.
	Engine string `json:"engine"`
	// Exchanges are the requests and responses, in the order the
	// responses began.
	Exchanges []Exchange `json:"exchanges"`
}

// Exchange is one HTTP request and its response. Exactly one of Body,
// Lines, Events and Text holds the response body, by its content type.
type Exchange struct {
	Method string `json:"method"`
	Path   string `json:"path"`
	// Request is the JSON request body, stripped; empty for none.
	Request json.RawMessage `json:"request,omitempty"`
	Status  int             `json:"status"`
	// ContentType is the response's Content-Type.
	ContentType string `json:"content_type"`
	// Body is a JSON response body (application/json).
	Body json.RawMessage `json:"body,omitempty"`
	// Lines are the objects of a streamed Ollama reply
	// (application/x-ndjson), one a line.
	Lines []json.RawMessage `json:"lines,omitempty"`
	// Events are the data of a streamed OpenAI reply (text/event-stream),
	// one an event; the last is the JSON string "[DONE]".
	Events []json.RawMessage `json:"events,omitempty"`
	// Text is any other response body.
	Text string `json:"text,omitempty"`
}

// stripKeys are the response fields that vary from run to run: Ollama's
// durations and timestamps, OpenAI's creation time and llama-server's
// timings. Their values become zero values of the same JSON type.
var stripKeys = map[string]bool{
	"total_duration": true, "load_duration": true, "prompt_eval_duration": true, "eval_duration": true,
	"created_at": true, "created": true, "modified_at": true, "expires_at": true,
	"prompt_ms": true, "predicted_ms": true, "prompt_per_second": true, "predicted_per_second": true,
	"prompt_per_token_ms": true, "predicted_per_token_ms": true,
}

// stripTime replaces every timestamp in a transcript.
const stripTime = "2026-01-01T00:00:00Z"

// Strip rewrites a JSON value for a transcript: the fields that vary from
// run to run (durations, timestamps, timings) become zero values, and
// generated ids ("call_…", "chatcmpl-…") become numbered ones in order of
// appearance, the same id the same number throughout ids. Values that are
// not JSON are returned unchanged.
func Strip(raw []byte, ids map[string]string) []byte {
	var v any
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	if err := d.Decode(&v); err != nil {
		return raw
	}
	return marshal(strip(v, ids), raw)
}

// marshal encodes v without escaping <, > and & (chat templates are full
// of them), or returns fallback.
func marshal(v any, fallback []byte) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fallback
	}
	return bytes.TrimRight(b.Bytes(), "\n")
}

func strip(v any, ids map[string]string) any {
	switch x := v.(type) {
	case map[string]any:
		for k, val := range x {
			if stripKeys[k] {
				switch val.(type) {
				case string:
					x[k] = stripTime
				case json.Number:
					x[k] = json.Number("0")
				}
				continue
			}
			x[k] = strip(val, ids)
		}
		return x
	case []any:
		for i := range x {
			x[i] = strip(x[i], ids)
		}
		return x
	case string:
		for _, p := range []string{"call_", "chatcmpl-"} {
			if strings.HasPrefix(x, p) && len(x) > len(p)+4 && !strings.ContainsAny(x, " \n") {
				if n, ok := ids[x]; ok {
					return n
				}
				n := fmt.Sprintf("%s%d", p, len(ids))
				ids[x] = n
				return n
			}
		}
		return x
	}
	return v
}

// Record returns an HTTP client for the adapters under test that records
// every exchange with s. When update is true (the test's -update flag)
// the transcript is written to testdata/engine/NAME.json (NAME.ollama.json
// under Ollama: [TranscriptName]) when the test
// ends, even when it failed: it holds what the engine answered, which
// does not depend on the checks.
func (s *Server) Record(t testing.TB, name string, update bool) *http.Client {
	t.Helper()
	r := &recorder{base: http.DefaultTransport, tr: &Transcript{Engine: s.Engine}, ids: map[string]string{}}
	t.Cleanup(func() {
		if !update {
			return
		}
		if err := r.write(TranscriptPath(TranscriptName(name, s.Engine))); err != nil {
			t.Errorf("engine: writing the transcript: %v", err)
		}
	})
	return &http.Client{Transport: r}
}

// TranscriptName is the name of the transcript of the test name recorded
// on engine eng: name itself for [LlamaCpp], name + ".ollama" for
// [Ollama], so that both engines' transcripts sit side by side.
func TranscriptName(name, eng string) string {
	if eng == Ollama {
		return name + ".ollama"
	}
	return name
}

// TranscriptPath is where the transcript NAME lives: testdata/engine/NAME.json
// under the test's working directory (its package directory).
func TranscriptPath(name string) string {
	return filepath.Join("testdata", "engine", name+".json")
}

type recorder struct {
	base http.RoundTripper
	mu   sync.Mutex
	tr   *Transcript
	ids  map[string]string
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	var reqBody []byte
	if req.Body != nil {
		b, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
		reqBody = b
		req.Body = io.NopCloser(bytes.NewReader(b))
	}
	resp, err := r.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	r.mu.Lock()
	defer r.mu.Unlock()
	ex := Exchange{Method: req.Method, Path: req.URL.Path, Status: resp.StatusCode, ContentType: resp.Header.Get("Content-Type")}
	if len(bytes.TrimSpace(reqBody)) > 0 {
		ex.Request = Strip(reqBody, r.ids)
	}
	fill(&ex, body, r.ids)
	r.tr.Exchanges = append(r.tr.Exchanges, ex)
	return resp, nil
}

// fill puts body into the field of ex its content type calls for.
func fill(ex *Exchange, body []byte, ids map[string]string) {
	ct := ex.ContentType
	switch {
	case strings.HasPrefix(ct, "application/x-ndjson"):
		sc := bufio.NewScanner(bytes.NewReader(body))
		sc.Buffer(make([]byte, 0, 64*1024), 64<<20)
		for sc.Scan() {
			if line := bytes.TrimSpace(sc.Bytes()); len(line) > 0 {
				ex.Lines = append(ex.Lines, Strip(line, ids))
			}
		}
	case strings.HasPrefix(ct, "text/event-stream"):
		for _, ev := range strings.Split(string(body), "\n\n") {
			data, ok := strings.CutPrefix(strings.TrimSpace(ev), "data: ")
			if !ok {
				continue
			}
			if data == "[DONE]" {
				ex.Events = append(ex.Events, json.RawMessage(`"[DONE]"`))
				continue
			}
			ex.Events = append(ex.Events, Strip([]byte(data), ids))
		}
	case strings.HasPrefix(ct, "application/json") && json.Valid(body):
		ex.Body = Strip(body, ids)
	default:
		ex.Text = string(body)
	}
}

func (r *recorder) write(path string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", " ")
	if err := enc.Encode(r.tr); err != nil {
		return err
	}
	out := bytes.TrimRight(b.Bytes(), "\n")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, append(out, '\n'), 0o644)
}

// LoadTranscript reads testdata/engine/NAME.json.
func LoadTranscript(name string) (*Transcript, error) {
	return ReadTranscript(TranscriptPath(name))
}

// ReadTranscript reads the transcript file at path (another package's,
// for example "../ollama/testdata/engine/ollama_refusal.json").
func ReadTranscript(path string) (*Transcript, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var tr Transcript
	if err := json.Unmarshal(b, &tr); err != nil {
		return nil, fmt.Errorf("engine: %s: %w", path, err)
	}
	return &tr, nil
}

// Replayer serves a recorded [Transcript] over HTTP.
type Replayer struct {
	// URL is the base URL of the replaying server.
	URL string
	// Transcript is what is replayed.
	Transcript *Transcript

	t    testing.TB
	mu   sync.Mutex
	used []bool
}

// Replay starts a server that answers with the transcript NAME: each
// request gets the first unused exchange with the same method, path and
// request body (JSON-equal after [Strip]), else the first unused one with
// the same method and path, whose request difference is logged. A
// request with no exchange left, or exchanges left unused when the test
// ends, fail the test: the adapters no longer talk as they did when the
// transcript was recorded, and it must be recorded again ([How], with
// -update). A missing transcript fails the test.
func Replay(t testing.TB, name string) *Replayer {
	t.Helper()
	tr, err := LoadTranscript(name)
	if err != nil {
		t.Fatalf("engine: %v (record it with EXISTENCE_ENGINE=llamacpp or ollama go test -run TestEngine -update)", err)
	}
	rp := &Replayer{Transcript: tr, t: t, used: make([]bool, len(tr.Exchanges))}
	srv := httptest.NewServer(http.HandlerFunc(rp.serve))
	t.Cleanup(func() {
		srv.Close()
		rp.mu.Lock()
		defer rp.mu.Unlock()
		for i, u := range rp.used {
			if !u {
				ex := tr.Exchanges[i]
				t.Errorf("engine: transcript %s: exchange %d (%s %s) was not replayed: record it again with -update", name, i, ex.Method, ex.Path)
			}
		}
	})
	rp.URL = srv.URL
	return rp
}

func (rp *Replayer) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	got := Strip(body, map[string]string{})
	ex, diff := rp.take(r.Method, r.URL.Path, got)
	if ex == nil {
		rp.t.Errorf("engine: no recorded exchange left for %s %s: record the transcript again with -update", r.Method, r.URL.Path)
		http.Error(w, "no recorded exchange", http.StatusTeapot)
		return
	}
	if diff {
		rp.t.Logf("engine: %s %s: the request differs from the recorded one\n got: %s\nwant: %s", r.Method, r.URL.Path, got, ex.Request)
	}
	w.Header().Set("Content-Type", ex.ContentType)
	w.WriteHeader(ex.Status)
	switch {
	case ex.Body != nil:
		_, _ = w.Write(compact(ex.Body))
	case ex.Lines != nil:
		for _, l := range ex.Lines {
			_, _ = w.Write(append(compact(l), '\n'))
		}
	case ex.Events != nil:
		for _, e := range ex.Events {
			data := compact(e)
			if string(data) == `"[DONE]"` {
				data = []byte("[DONE]")
			}
			_, _ = fmt.Fprintf(w, "data: %s\n\n", data)
		}
	default:
		_, _ = io.WriteString(w, ex.Text)
	}
}

// take claims the exchange for a request; diff reports that only the
// method and path matched.
func (rp *Replayer) take(method, path string, body []byte) (ex *Exchange, diff bool) {
	rp.mu.Lock()
	defer rp.mu.Unlock()
	first := -1
	for i := range rp.Transcript.Exchanges {
		e := &rp.Transcript.Exchanges[i]
		if rp.used[i] || e.Method != method || e.Path != path {
			continue
		}
		if jsonEqual(e.Request, body) {
			rp.used[i] = true
			return e, false
		}
		if first < 0 {
			first = i
		}
	}
	if first < 0 {
		return nil, false
	}
	rp.used[first] = true
	return &rp.Transcript.Exchanges[first], true
}

// compact undoes the transcript file's indentation: a reply is one line
// (Ollama's client reads its replies line by line).
func compact(raw []byte) []byte {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return raw
	}
	return b.Bytes()
}

func jsonEqual(a, b []byte) bool {
	if len(bytes.TrimSpace(a)) == 0 || len(bytes.TrimSpace(b)) == 0 {
		return len(bytes.TrimSpace(a)) == len(bytes.TrimSpace(b))
	}
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return bytes.Equal(a, b)
	}
	return reflect.DeepEqual(x, y)
}
