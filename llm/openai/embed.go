package openai

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"

	oai "github.com/openai/openai-go/v3"

	"github.com/existence-loop/sdk/llm"
	"github.com/existence-loop/sdk/llm/middleware"
)

// DefaultEmbedBatch is how many texts one /embeddings request carries at
// most when [EmbedConfig].Batch is 0.
const DefaultEmbedBatch = 64

// EmbedConfig configures an [Embedder]. Only Model is required.
type EmbedConfig struct {
	// BaseURL is the API base URL ending in /v1, as [Config].BaseURL:
	// empty means $OPENAI_BASE_URL, else [DefaultBaseURL]. Requests go to
	// BaseURL + "/embeddings".
	BaseURL string
	// APIKey is sent as "Authorization: Bearer KEY", as [Config].APIKey:
	// empty means $OPENAI_API_KEY, else no header.
	APIKey string
	// Model is the embedding model's name, e.g. "text-embedding-3-small",
	// or "nomic-embed-text" on Ollama's /v1. Required.
	Model string
	// Dimensions, when positive, asks for vectors of this many dimensions
	// (the request's "dimensions", which text-embedding-3 models honour);
	// 0 takes the model's own, learned from the first reply.
	Dimensions int
	// Batch is the most texts one request carries (default 64); a longer
	// Embed call makes several requests, in order.
	Batch int
	// HTTPClient sends the requests; nil means a client without a timeout
	// (bound calls with the context).
	HTTPClient *http.Client
	// AllowRedirect are the hosts a redirect may lead to besides the base
	// URL's origin, as [Config].AllowRedirect.
	AllowRedirect []string
}

// Embedder is an [llm.Embedder] backed by an OpenAI-compatible
// embeddings endpoint (POST {BaseURL}/embeddings), through openai-go's
// embeddings API with its own retries disabled. Vectors are asked for as
// floats ("encoding_format": "float"). It is safe for concurrent use.
type Embedder struct {
	endpoint
	cfg  EmbedConfig
	svc  oai.EmbeddingService
	dims atomic.Int64
}

var _ llm.Embedder = (*Embedder)(nil)

// NewEmbedder returns an Embedder for cfg, filling BaseURL and APIKey from
// the environment as documented on [EmbedConfig]. It makes no network
// call. Errors: an empty Model, a negative Dimensions or Batch, a base URL
// that is not an absolute http or https URL with a host.
func NewEmbedder(cfg EmbedConfig) (*Embedder, error) {
	if strings.TrimSpace(cfg.Model) == "" {
		return nil, errors.New("openai: EmbedConfig.Model is required (for example \"text-embedding-3-small\")")
	}
	if cfg.Dimensions < 0 || cfg.Batch < 0 {
		return nil, errors.New("openai: EmbedConfig.Dimensions and Batch must not be negative")
	}
	if cfg.Batch == 0 {
		cfg.Batch = DefaultEmbedBatch
	}
	base, hc, opts, err := clientOptions(&cfg.BaseURL, &cfg.APIKey, cfg.HTTPClient, cfg.AllowRedirect)
	if err != nil {
		return nil, err
	}
	e := &Embedder{endpoint: endpoint{base: base, path: "/embeddings", hc: hc}, cfg: cfg, svc: oai.NewEmbeddingService(opts...)}
	e.dims.Store(int64(cfg.Dimensions))
	return e, nil
}

// Model returns the embedding model's name.
func (e *Embedder) Model() string { return e.cfg.Model }

// Dimensions returns the vectors' length: [EmbedConfig].Dimensions, else
// what the first reply had; 0 before it.
func (e *Embedder) Dimensions() int { return int(e.dims.Load()) }

// BaseURL returns the API base URL requests go to.
func (e *Embedder) BaseURL() string { return e.base }

// Embed returns one vector per text, in order, sending at most
// [EmbedConfig].Batch texts per request. Each reply's vectors are placed
// by their "index".
//
// Errors (errors.Is / errors.As): ctx's error, wrapped, when ctx ends;
// [*llm.UnavailableError] when the server cannot be reached;
// [*llm.ModelNotFoundError] for an unknown model; an [llm.StatusError]
// for any other HTTP status, with Retry-After (or retry-after-ms);
// [*llm.DimensionsError] for a reply with the wrong number of vectors or
// dimensions; a plain error for an index out of range or repeated.
func (e *Embedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, 0, len(texts))
	for _, b := range llm.Batches(len(texts), e.cfg.Batch) {
		vecs, err := e.embed(ctx, texts[b[0]:b[1]])
		if err != nil {
			return nil, err
		}
		out = append(out, vecs...)
	}
	return out, nil
}

func (e *Embedder) embed(ctx context.Context, texts []string) ([][]float32, error) {
	params := oai.EmbeddingNewParams{
		Model:          oai.EmbeddingModel(e.cfg.Model),
		Input:          oai.EmbeddingNewParamsInputUnion{OfArrayOfStrings: texts},
		EncodingFormat: oai.EmbeddingNewParamsEncodingFormatFloat,
	}
	if e.cfg.Dimensions > 0 {
		params.Dimensions = oai.Int(int64(e.cfg.Dimensions))
	}
	sctx := withStatus(ctx)
	resp, err := e.svc.New(middleware.WithReplyLimit(sctx, middleware.EmbedReplyLimit(len(texts), e.Dimensions())), params)
	if err != nil {
		return nil, e.classify(sctx, e.cfg.Model, err)
	}
	if resp == nil || !resp.JSON.Data.Valid() {
		return nil, &llm.ProtocolError{Provider: Provider, URL: e.base, Err: errors.New(`the reply is not an embeddings list (no "data")`)}
	}
	middleware.ReportEmbedUsage(ctx, int(resp.Usage.PromptTokens))
	vecs := make([][]float32, len(texts))
	if len(resp.Data) != len(texts) {
		// Not one vector per text: the reply is not an answer to the
		// request.
		return nil, &llm.ProtocolError{Provider: Provider, URL: e.base, Err: &llm.DimensionsError{Provider: Provider, Model: e.cfg.Model, Want: len(texts), Got: len(resp.Data), Index: -1}}
	}
	for _, d := range resp.Data {
		i := int(d.Index)
		if d.Index < 0 || i >= len(texts) || vecs[i] != nil {
			return nil, &llm.ProtocolError{Provider: Provider, URL: e.base, Err: fmt.Errorf("embedding index %d is out of range or repeated for %d texts", d.Index, len(texts))}
		}
		v := make([]float32, len(d.Embedding))
		for j, x := range d.Embedding {
			v[j] = float32(x)
		}
		vecs[i] = v
	}
	dims, err := llm.CheckEmbeddings(Provider, e.cfg.Model, vecs, len(texts), e.Dimensions())
	if err != nil {
		return nil, err
	}
	if !e.dims.CompareAndSwap(0, int64(dims)) && e.Dimensions() != dims {
		return nil, &llm.DimensionsError{Provider: Provider, Model: e.cfg.Model, Want: e.Dimensions(), Got: dims}
	}
	return vecs, nil
}
