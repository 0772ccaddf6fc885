package cli

import (
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"strings"

	"github.com/existence-loop/sdk/llm"
	"github.com/existence-loop/sdk/llm/llmtest"
	"github.com/existence-loop/sdk/llm/ollama"
	"github.com/existence-loop/sdk/llm/openai"
	"github.com/existence-loop/sdk/llm/pool"
)

// embedOptions are the flags that name the embedding model of long-term
// memory: -embed-provider, -embed-url and -embed-model, the embedding
// counterparts of -provider, -llm-url and -model.
type embedOptions struct {
	provider, url, model string
	urls                 []string // every -embed-url: more than one makes a pool.EmbedPool
	allowRedirect        []string // -llm-allow-redirect: hosts the servers may redirect to
}

// flags registers the embedder's flags on fs.
func (o *embedOptions) flags(fs *flag.FlagSet) {
	fs.StringVar(&o.provider, "embed-provider", "ollama", "embedding provider: ollama (/api/embed) or openai (any OpenAI-compatible /v1/embeddings)")
	fs.Func("embed-url", "embedding server URL (default $OLLAMA_HOST, else http://127.0.0.1:11434; with -embed-provider openai, a base URL ending in /v1, default $OPENAI_BASE_URL;\n"+
		"\"standin:\" embeds with llm/llmtest's stand-in in this process: deterministic vectors, no server; the default with -llm-url standin:);\n"+
		"repeat it for a pool of servers of the model, each call sent to the one with the fewest in flight and moved to another when one fails", func(s string) error {
		if o.url == "" {
			o.url = s
		}
		o.urls = append(o.urls, s)
		return nil
	})
	fs.StringVar(&o.model, "embed-model", ollama.DefaultEmbedModel, "embedding model (run ollama pull nomic-embed-text first); it names the memories' vector space")
}

// check validates the flags.
func (o *embedOptions) check() error {
	switch o.provider {
	case "ollama":
	case "openai":
		if o.url == "" && os.Getenv("OPENAI_BASE_URL") == "" {
			return errors.New("-embed-provider openai needs -embed-url (a base URL ending in /v1) or $OPENAI_BASE_URL")
		}
	default:
		return fmt.Errorf("-embed-provider %q: want ollama or openai", o.provider)
	}
	if o.model == "" {
		return errors.New("-embed-model must name a model")
	}
	return nil
}

// embedder builds the embedder and returns it with the server URL it
// resolved: with several -embed-url, a pool.EmbedPool of one adapter each,
// named by their URLs, and the URLs comma-separated. It makes no network
// call.
func (o *embedOptions) embedder() (llm.Embedder, string, error) {
	if len(o.urls) <= 1 {
		return o.one(o.url)
	}
	var servers []pool.EmbedServer
	var urls []string
	for _, u := range o.urls {
		e, url, err := o.one(u)
		if err != nil {
			return nil, "", err
		}
		servers = append(servers, pool.EmbedServer{Name: url, Embedder: e})
		urls = append(urls, url)
	}
	pl, err := pool.NewEmbed(pool.EmbedConfig{Servers: servers})
	if err != nil {
		return nil, "", err
	}
	return pl, strings.Join(urls, ", "), nil
}

// one builds the adapter of one embedding server at url; "standin:..."
// is llm/llmtest's stand-in server, serving -embed-model's deterministic
// vectors in this process (see standinEmbedder).
func (o *embedOptions) one(url string) (llm.Embedder, string, error) {
	var hc *http.Client
	if isStandin(url) {
		var err error
		if url, hc, err = o.standin(url); err != nil {
			return nil, "", err
		}
	}
	if o.provider == "openai" {
		e, err := openai.NewEmbedder(openai.EmbedConfig{BaseURL: url, Model: o.model, AllowRedirect: o.allowRedirect, HTTPClient: hc})
		if err != nil {
			return nil, "", err
		}
		return e, e.BaseURL(), nil
	}
	e, err := ollama.NewEmbedder(ollama.EmbedConfig{URL: url, Model: o.model, AllowRedirect: o.allowRedirect, HTTPClient: hc})
	if err != nil {
		return nil, "", err
	}
	return e, e.URL(), nil
}

// standin returns the base URL and the client of an in-process stand-in
// server (llm/llmtest) for spec, "standin:" and the settings of
// -llm-url's stand-in (a latency of 0 unless given), whose one model is
// -embed-model as an embedding model of 768 dimensions: deterministic
// vectors (llmtest.Embedding), no socket, nothing to close. The URL names
// it: "http://standin.invalid" (with "/v1" for -embed-provider openai).
func (o *embedOptions) standin(spec string) (string, *http.Client, error) {
	cfg, err := parseStandin(spec)
	if err != nil {
		return "", nil, fmt.Errorf("-embed-url: %w", err)
	}
	if !strings.Contains(spec, "latency=") {
		cfg.Latency = 0
	}
	cfg.Models = []llmtest.ModelSpec{{Name: o.model, Embedding: true}}
	s := llmtest.NewServer(cfg)
	base := "http://standin.invalid"
	if o.provider == "openai" {
		base += "/v1"
	}
	return base, &http.Client{Transport: handlerTransport{s.Handler()}}, nil
}
