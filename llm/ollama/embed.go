package ollama

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/ollama/ollama/api"

	"github.com/existence-loop/sdk/llm"
	"github.com/existence-loop/sdk/llm/middleware"
)

// DefaultEmbedModel is the embedding model of [EmbedConfig] when none is
// named: nomic-embed-text (768 dimensions), the original system's model.
const DefaultEmbedModel = "nomic-embed-text"

// DefaultEmbedBatch is how many texts one /api/embed request carries at
// most when [EmbedConfig].Batch is 0.
const DefaultEmbedBatch = 32

// EmbedConfig configures an [Embedder]. The zero value embeds with
// nomic-embed-text on $OLLAMA_HOST or [DefaultURL].
type EmbedConfig struct {
	// URL is the Ollama server's base URL, as [Config].URL: empty means
	// $OLLAMA_HOST, else [DefaultURL].
	URL string
	// Model is the embedding model's name; empty means
	// [DefaultEmbedModel].
	Model string
	// Dimensions, when positive, asks the server for vectors of this many
	// dimensions (the request's "dimensions", for models trained to be
	// cut, such as nomic-embed-text v1.5); 0 takes the model's own, learned
	// from the first reply.
	Dimensions int
	// Batch is the most texts one request carries (default 32); a longer
	// Embed call makes several requests, in order.
	Batch int
	// HTTPClient sends the requests, as [Config].HTTPClient; nil means a
	// client without a timeout (bound calls with the context).
	HTTPClient *http.Client
	// KeepAlive is how long the server keeps the model loaded after a
	// call, as [Config].KeepAlive; nil leaves it to the server.
	KeepAlive *time.Duration
	// AllowRedirect are the hosts a redirect may lead to besides the
	// URL's origin, as [Config].AllowRedirect.
	AllowRedirect []string
}

// Embedder is an [llm.Embedder] backed by an Ollama server's /api/embed
// endpoint, through the official client's Embed. Texts longer than the
// model's context are cut by the server ("truncate": true). It is safe for
// concurrent use.
type Embedder struct {
	cfg    EmbedConfig
	base   *url.URL
	client *api.Client
	dims   atomic.Int64
}

var _ llm.Embedder = (*Embedder)(nil)

// NewEmbedder returns an Embedder for cfg. It makes no network call.
// Errors: a negative Dimensions or Batch, or a URL (from cfg.URL or
// OLLAMA_HOST) that is not a valid http or https URL with a host.
func NewEmbedder(cfg EmbedConfig) (*Embedder, error) {
	if cfg.Dimensions < 0 || cfg.Batch < 0 {
		return nil, errors.New("ollama: EmbedConfig.Dimensions and Batch must not be negative")
	}
	if strings.TrimSpace(cfg.Model) == "" {
		cfg.Model = DefaultEmbedModel
	}
	if cfg.Batch == 0 {
		cfg.Batch = DefaultEmbedBatch
	}
	base, err := resolveURL(cfg.URL)
	if err != nil {
		return nil, err
	}
	hc := httpClient(base, cfg.HTTPClient, cfg.AllowRedirect)
	e := &Embedder{cfg: cfg, base: base, client: api.NewClient(base, hc)}
	e.dims.Store(int64(cfg.Dimensions))
	return e, nil
}

// Model returns the embedding model's name, e.g. "nomic-embed-text".
func (e *Embedder) Model() string { return e.cfg.Model }

// Dimensions returns the vectors' length: [EmbedConfig].Dimensions, else
// what the first reply had; 0 before it.
func (e *Embedder) Dimensions() int { return int(e.dims.Load()) }

// URL returns the base URL of the Ollama server.
func (e *Embedder) URL() string { return e.base.String() }

// Embed returns one vector per text, in order, sending at most
// [EmbedConfig].Batch texts per request. Vectors are as the server sends
// them (Ollama's /api/embed normalises them).
//
// Errors (errors.Is / errors.As): ctx's error, wrapped, when ctx ends;
// [*llm.UnavailableError] when the server cannot be reached (hint: `ollama
// serve`); [*llm.ModelNotFoundError] (hint: `ollama pull MODEL`); an
// [llm.StatusError] for any other HTTP status, with Retry-After (a busy
// server answers 503); [*llm.DimensionsError] for a reply with the wrong
// number of vectors or dimensions. Nothing is returned for the batches
// before a failed one.
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
	truncate := true
	req := &api.EmbedRequest{Model: e.cfg.Model, Input: texts, Truncate: &truncate, Dimensions: e.cfg.Dimensions}
	if e.cfg.KeepAlive != nil {
		req.KeepAlive = &api.Duration{Duration: *e.cfg.KeepAlive}
	}
	ex := &exchange{}
	ectx := middleware.WithReplyLimit(context.WithValue(ctx, exchangeKey{}, ex), middleware.EmbedReplyLimit(len(texts), e.Dimensions()))
	resp, err := e.client.Embed(ectx, req)
	if err == nil && resp == nil {
		err = ex.incomplete()
	}
	if err != nil {
		return nil, classify(ctx, e.base, "embed with", e.cfg.Model, ex, err)
	}
	middleware.ReportEmbedUsage(ctx, resp.PromptEvalCount)
	if len(resp.Embeddings) != len(texts) {
		// Not one vector per text (a reply of another shape decodes to
		// none): the reply is not an answer to the request.
		return nil, &llm.ProtocolError{Provider: Provider, URL: e.base.String(), Err: &llm.DimensionsError{Provider: Provider, Model: e.cfg.Model, Want: len(texts), Got: len(resp.Embeddings), Index: -1}}
	}
	dims, err := llm.CheckEmbeddings(Provider, e.cfg.Model, resp.Embeddings, len(texts), e.Dimensions())
	if err != nil {
		return nil, err
	}
	if !e.dims.CompareAndSwap(0, int64(dims)) && e.Dimensions() != dims {
		// a concurrent first reply of other dimensions won
		return nil, &llm.DimensionsError{Provider: Provider, Model: e.cfg.Model, Want: e.Dimensions(), Got: dims}
	}
	return resp.Embeddings, nil
}
