package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strings"
)

// Mismatch is one way a server answered a transcript's request unlike
// the engine did.
type Mismatch struct {
	// Index is the exchange's position in the transcript.
	Index        int
	Method, Path string
	// Problem says what differs, e.g. `missing keys [usage.prompt_tokens_details.cached_tokens]`.
	Problem string
}

func (m Mismatch) String() string {
	return fmt.Sprintf("exchange %d (%s %s): %s", m.Index, m.Method, m.Path, m.Problem)
}

// ConformOptions narrows what [Conform] compares.
type ConformOptions struct {
	// Keep selects the exchanges to send; nil means all.
	Keep func(Exchange) bool
	// Ignore are key paths (dotted, "usage.prompt_tokens_details") whose
	// absence is not reported, with everything under them; a path ending
	// in "*" ignores every key starting with the rest ("*_duration" is not
	// supported, "timings*" is).
	Ignore []string
}

// Conform sends each request of tr that opts keeps, in order, to the
// server at base and compares its answers with the engine's in shape, for
// checking a stand-in against real server behaviour: the HTTP status; for
// a 200 answer, the JSON keys of its final object (Body, the last of
// Lines, the last JSON of Events) that the engine sent and the server did
// not, and the done_reason or finish_reason (when the server's reply is
// at least as long as the engine's); for an error answer, the
// error message with its numbers masked. Words and counts are not
// compared: they are the model's. It returns an error only when a request
// cannot be sent.
func Conform(ctx context.Context, client *http.Client, base string, tr *Transcript, opts ConformOptions) ([]Mismatch, error) {
	var out []Mismatch
	for i, ex := range tr.Exchanges {
		if opts.Keep != nil && !opts.Keep(ex) {
			continue
		}
		var body io.Reader
		if len(ex.Request) > 0 {
			body = bytes.NewReader(compact(ex.Request))
		}
		req, err := http.NewRequestWithContext(ctx, ex.Method, base+ex.Path, body)
		if err != nil {
			return out, err
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			return out, err
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return out, err
		}
		got := Exchange{Method: ex.Method, Path: ex.Path, Status: resp.StatusCode, ContentType: resp.Header.Get("Content-Type")}
		fill(&got, b, map[string]string{})
		miss := func(format string, args ...any) {
			out = append(out, Mismatch{Index: i, Method: ex.Method, Path: ex.Path, Problem: fmt.Sprintf(format, args...)})
		}
		if got.Status != ex.Status {
			miss("status %d, the engine answered %d (%s)", got.Status, ex.Status, errorMessage(final(ex)))
			continue
		}
		want, have := final(ex), final(got)
		if ex.Status != http.StatusOK {
			if w, h := maskDigits(errorMessage(want)), maskDigits(errorMessage(have)); w != h {
				miss("error %q, the engine said %q", errorMessage(have), errorMessage(want))
			}
			continue
		}
		wk, hk := keyPaths(want), keyPaths(have)
		var missing []string
		for k := range wk {
			if !hk[k] && !ignored(k, opts.Ignore) {
				missing = append(missing, k)
			}
		}
		slices.Sort(missing)
		if len(missing) > 0 {
			miss("missing keys %v", missing)
		}
		// A done reason is compared only when the server's reply is as
		// long as the engine's: a shorter reply ends with "stop" rightly.
		if replyTokens(have) >= replyTokens(want) {
			for _, k := range []string{"done_reason", "choices.finish_reason"} {
				if w, h := valueAt(want, k), valueAt(have, k); w != h {
					miss("%s %q, the engine said %q", k, h, w)
				}
			}
		}
	}
	return out, nil
}

func ignored(k string, ignore []string) bool {
	for _, p := range ignore {
		if pre, ok := strings.CutSuffix(p, "*"); ok && strings.HasPrefix(k, pre) {
			return true
		}
		if k == p || strings.HasPrefix(k, p+".") {
			return true
		}
	}
	return false
}

// replyTokens is a final object's generated tokens: Ollama's eval_count
// or OpenAI's usage.completion_tokens; 0 when absent.
func replyTokens(v any) float64 {
	m, _ := v.(map[string]any)
	if n, ok := m["eval_count"].(float64); ok {
		return n
	}
	u, _ := m["usage"].(map[string]any)
	n, _ := u["completion_tokens"].(float64)
	return n
}

// final is the last JSON object of an answer.
func final(ex Exchange) any {
	raw := ex.Body
	if len(ex.Lines) > 0 {
		raw = ex.Lines[len(ex.Lines)-1]
	}
	for i := len(ex.Events) - 1; i >= 0 && raw == nil; i-- {
		if string(ex.Events[i]) != `"[DONE]"` {
			raw = ex.Events[i]
		}
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return ex.Text
	}
	return v
}

// errorMessage is Ollama's "error" string or OpenAI's error.message.
func errorMessage(v any) string {
	m, ok := v.(map[string]any)
	if !ok {
		s, _ := v.(string)
		return strings.TrimSpace(s)
	}
	switch e := m["error"].(type) {
	case string:
		return e
	case map[string]any:
		s, _ := e["message"].(string)
		return s
	}
	return ""
}

var digits = regexp.MustCompile(`[0-9]+`)

func maskDigits(s string) string { return digits.ReplaceAllString(s, "N") }

// keyPaths lists the dotted paths of every key in v; array elements share
// their array's path.
func keyPaths(v any) map[string]bool {
	out := map[string]bool{}
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, val := range x {
				p := k
				if prefix != "" {
					p = prefix + "." + k
				}
				out[p] = true
				walk(p, val)
			}
		case []any:
			for _, e := range x {
				walk(prefix, e)
			}
		}
	}
	walk("", v)
	return out
}

// valueAt is the string at a dotted path (through the first element of
// arrays), or "".
func valueAt(v any, path string) string {
	for _, k := range strings.Split(path, ".") {
		if a, ok := v.([]any); ok {
			if len(a) == 0 {
				return ""
			}
			v = a[0]
		}
		m, ok := v.(map[string]any)
		if !ok {
			return ""
		}
		v = m[k]
	}
	s, _ := v.(string)
	return s
}
