package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"
)

// Target is where a test's checks run: a live engine whose exchanges are
// recorded ([Live]), or the transcript of an earlier run replayed
// ([Replayed]). A check written against a Target runs both ways, the
// TestEngine… test against the engine and its TestTranscript… twin in the
// quick suite.
type Target struct {
	// URL is the server's base URL.
	URL string
	// Client is the HTTP client to give the adapters under test.
	Client *http.Client
	// Model is the model's name on the server.
	Model string
	// Server is the live engine; nil when replaying.
	Server *Server
	// Engine is the engine that answers or answered: [LlamaCpp] or
	// [Ollama]. Checks whose expectations differ by engine read it.
	Engine string
}

// Engines are the engines the TestEngine tests run against, and whose
// transcripts the TestTranscript tests replay.
var Engines = []string{LlamaCpp, Ollama}

// Live starts the engine with cfg ([Start]: the test skips without one)
// and records the exchanges as the transcript name, written when update
// is true.
func Live(t testing.TB, name string, cfg Config, update bool) Target {
	t.Helper()
	srv := Start(t, cfg)
	return Target{URL: srv.URL, Client: srv.Record(t, name, update), Model: srv.Model, Server: srv, Engine: srv.Engine}
}

// Replayed serves the transcript name that llama.cpp answered ([Replay]).
func Replayed(t testing.TB, name string) Target {
	t.Helper()
	return ReplayedOn(t, name, LlamaCpp)
}

// ReplayedOn serves the transcript name that engine eng answered
// ([TranscriptName], [Replay]).
func ReplayedOn(t testing.TB, name, eng string) Target {
	t.Helper()
	rp := Replay(t, TranscriptName(name, eng))
	return Target{URL: rp.URL, Client: &http.Client{}, Model: ModelName, Engine: eng}
}

// Do sends a JSON request (body nil: none) to path and decodes a 200
// reply into out (nil: discarded). Another status is an error holding
// the status and body.
func (tg Target) Do(ctx context.Context, method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, tg.URL+path, rd)
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := tg.Client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s %s: HTTP %d: %s", method, path, resp.StatusCode, bytes.TrimSpace(b))
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(b, out)
}

// Tokens counts the tokens of text with the engine's tokenizer
// (llama-server's POST /tokenize, without special tokens).
func (tg Target) Tokens(ctx context.Context, text string) (int, error) {
	var r struct {
		Tokens []int `json:"tokens"`
	}
	if err := tg.Do(ctx, http.MethodPost, "/tokenize", map[string]any{"content": text}, &r); err != nil {
		return 0, err
	}
	return len(r.Tokens), nil
}

// Filler returns text of at least n tokens of the engine's tokenizer:
// sentences about the existence loop, repeated, counted with [Target.Tokens].
func (tg Target) Filler(ctx context.Context, n int) (string, error) {
	const sentence = "The agent reads the workspace, writes down what it found, and chooses its next goal from what hurts most. "
	text := sentence
	for {
		got, err := tg.Tokens(ctx, text)
		if err != nil {
			return "", err
		}
		if got >= n {
			return text, nil
		}
		reps := max(1, (n-got)*len(sentence)/max(got, 1)/len(sentence)+1)
		for range reps {
			text += sentence
		}
	}
}

// UpdateFlag defines the test binary's -update flag unless a package
// already has (golden-file helpers do), and returns a function that
// reports whether it is set. Call it once, in a package-level var of the
// test package: var engineUpdate = engine.UpdateFlag().
func UpdateFlag() func() bool {
	if flag.Lookup("update") == nil {
		flag.Bool("update", false, "rewrite the golden files under testdata/ (with EXISTENCE_ENGINE set: the engine transcripts too)")
	}
	return func() bool {
		f := flag.Lookup("update")
		return f != nil && f.Value.String() == "true"
	}
}

// Context returns a context for one engine test: it ends after 5 minutes
// (a CPU engine on cores shared with other work can be ten times slower
// than on idle ones) or when the test ends.
func Context(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	t.Cleanup(cancel)
	return ctx
}
