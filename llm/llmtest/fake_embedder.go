package llmtest

import (
	"context"
	"fmt"
	"sync"

	"github.com/existence-loop/sdk/llm"
)

// FakeEmbedder is a deterministic [llm.Embedder] for tests: each text's
// vector is [Embedding](text, dimensions), so texts that share words are
// near and the same text gives the same vector on every machine. Failures
// are scripted with [FakeEmbedder.Fail] and [FakeEmbedder.FailNext]. It is
// safe for concurrent use.
type FakeEmbedder struct {
	model string
	dims  int

	mu    sync.Mutex
	fail  error   // every call fails with it while set
	next  []error // the next calls fail with these, one each
	calls int     // Embed calls, failed ones included
	texts int     // texts embedded by calls that succeeded
	hang  bool
}

var _ llm.Embedder = (*FakeEmbedder)(nil)

// DefaultFakeEmbedModel is the model name of a [FakeEmbedder] made with
// an empty name.
const DefaultFakeEmbedModel = "fake-embed"

// NewFakeEmbedder returns a FakeEmbedder of the named model (empty means
// [DefaultFakeEmbedModel]) with dims dimensions (below 1 means 768, as
// nomic-embed-text).
func NewFakeEmbedder(model string, dims int) *FakeEmbedder {
	if model == "" {
		model = DefaultFakeEmbedModel
	}
	if dims < 1 {
		dims = 768
	}
	return &FakeEmbedder{model: model, dims: dims}
}

// Model returns the model name given to [NewFakeEmbedder].
func (f *FakeEmbedder) Model() string { return f.model }

// Dimensions returns the vectors' length, known from the start.
func (f *FakeEmbedder) Dimensions() int { return f.dims }

// Embed returns [Embedding](text, Dimensions()) for each text. Errors: the
// context's error (wrapped) when ctx is done, or ends while [FakeEmbedder.Hang] holds
// the call; the next error given to FailNext, else the one given to Fail,
// returned as is.
func (f *FakeEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	f.mu.Lock()
	f.calls++
	var err error
	switch {
	case len(f.next) > 0:
		err, f.next = f.next[0], f.next[1:]
	case f.fail != nil:
		err = f.fail
	}
	hang := f.hang && err == nil
	f.mu.Unlock()
	if cerr := ctx.Err(); cerr != nil {
		return nil, fmt.Errorf("llmtest: embed: %w", cerr)
	}
	if err != nil {
		return nil, err
	}
	if hang {
		<-ctx.Done()
		return nil, fmt.Errorf("llmtest: embed: %w", ctx.Err())
	}
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = Embedding(t, f.dims)
	}
	f.mu.Lock()
	f.texts += len(texts)
	f.mu.Unlock()
	return out, nil
}

// Fail makes every later call fail with err (for example
// &llm.UnavailableError{...} for a server that is down, or
// llm.StatusError{StatusCode: 503} for a busy one) until Fail(nil).
func (f *FakeEmbedder) Fail(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fail = err
}

// FailNext makes the next len(errs) calls fail, one error each, before
// anything set by Fail.
func (f *FakeEmbedder) FailNext(errs ...error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.next = append(f.next, errs...)
}

// Hang makes later calls that would succeed block until their context
// ends (a slow server), until Hang(false).
func (f *FakeEmbedder) Hang(on bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.hang = on
}

// Calls returns the number of Embed calls so far, failed ones included;
// Texts the number of texts embedded by the calls that succeeded.
func (f *FakeEmbedder) Calls() (calls, texts int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls, f.texts
}
