package llm

import (
	"context"
	"errors"
	"fmt"
	"math"
)

// Embedder turns texts into embedding vectors: one vector per text, in
// the same order, all of the same dimensions, from one model. It is the
// seam between long-term memory (package memory) and an embedding model:
// the Embedder adapters of llm/ollama (Ollama's /api/embed) and llm/openai
// (/v1/embeddings), and llmtest's deterministic FakeEmbedder, implement
// it.
//
// Embed sends texts (any number; adapters split them into batches) and
// returns len(texts) vectors of Dimensions() float32 values each, as the
// model produced them (not necessarily normalised). An empty texts gives
// an empty result and makes no call. It must return promptly when ctx ends,
// with an error wrapping ctx.Err(). Errors are classified as for [Model]:
// [*UnavailableError] (server down), [*ModelNotFoundError], [StatusError]
// (a busy server answers 503 with its Retry-After), and a
// [*DimensionsError] for a reply whose vectors do not match each other or
// the dimensions learned earlier.
//
// Model returns the embedding model's name, e.g. "nomic-embed-text": the
// name of the vector space, which recall compares before it compares
// vectors. Dimensions returns the vectors' length, e.g. 768 for
// nomic-embed-text; 0 while unknown (an adapter learns it from its first
// reply, or from its configuration). An Embedder must be safe for
// concurrent use.
type Embedder interface {
	Embed(ctx context.Context, texts []string) ([][]float32, error)
	Model() string
	Dimensions() int
}

// ErrDimensions: an embedding reply whose vectors have the wrong number of
// dimensions, or whose count does not match the texts. See
// [DimensionsError].
var ErrDimensions = errors.New("llm: embedding dimensions mismatch")

// DimensionsError reports embedding vectors that do not have the
// dimensions expected: the configured or learned dimensions, or those of
// the other vectors of the reply. It matches [ErrDimensions].
type DimensionsError struct {
	// Provider names the adapter ("ollama", "openai").
	Provider string
	// Model is the embedding model.
	Model string
	// Want is the expected number of dimensions; Got what a vector had.
	Want, Got int
	// Index is the position of the offending vector in the batch; -1
	// when the reply held the wrong number of vectors (Want and Got are
	// then counts of vectors).
	Index int
}

// Error reads like `ollama: embedding model "nomic-embed-text": vector 3
// has 384 dimensions, want 768`.
func (e *DimensionsError) Error() string {
	if e.Index < 0 {
		return fmt.Sprintf("%s: embedding model %q: the reply holds %d vectors for %d texts", e.Provider, e.Model, e.Got, e.Want)
	}
	return fmt.Sprintf("%s: embedding model %q: vector %d has %d dimensions, want %d", e.Provider, e.Model, e.Index, e.Got, e.Want)
}

// Is reports whether target is [ErrDimensions].
func (e *DimensionsError) Is(target error) bool { return target == ErrDimensions }

// CheckEmbeddings checks an adapter's reply: n vectors for n texts, each
// of want dimensions (want 0: all of the first vector's length, which
// must be at least 1), every value finite. It returns the dimensions found
// and a [*DimensionsError] or a plain error naming the bad value. Adapters
// call it on every reply; it is exported for third-party adapters.
func CheckEmbeddings(provider, model string, vecs [][]float32, n, want int) (int, error) {
	if len(vecs) != n {
		return 0, &DimensionsError{Provider: provider, Model: model, Want: n, Got: len(vecs), Index: -1}
	}
	for i, v := range vecs {
		if want == 0 {
			want = len(v)
			if want == 0 {
				return 0, &DimensionsError{Provider: provider, Model: model, Want: 1, Got: 0, Index: i}
			}
		}
		if len(v) != want {
			return 0, &DimensionsError{Provider: provider, Model: model, Want: want, Got: len(v), Index: i}
		}
		for j, x := range v {
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				return 0, fmt.Errorf("%s: embedding model %q: vector %d holds %v at dimension %d", provider, model, i, x, j)
			}
		}
	}
	return want, nil
}

// Batches splits n texts into consecutive batches of at most size texts
// (size < 1 means one batch) and returns each batch's [start, end) bounds.
// Adapters use it to honour their batch size.
func Batches(n, size int) [][2]int {
	if n <= 0 {
		return nil
	}
	if size < 1 || size > n {
		size = n
	}
	out := make([][2]int, 0, (n+size-1)/size)
	for i := 0; i < n; i += size {
		out = append(out, [2]int{i, min(i+size, n)})
	}
	return out
}
