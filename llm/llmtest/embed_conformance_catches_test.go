package llmtest_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/llm"
	"github.com/existence-loop/sdk/llm/llmtest"
	"github.com/existence-loop/sdk/llm/ollama"
)

// brokenEmbedder wraps a correct embedder (llm/ollama's) and breaks one
// behaviour on purpose, as an adapter with that bug would.
type brokenEmbedder struct {
	llm.Embedder
	bug string
}

func (b brokenEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	vecs, err := b.Embedder.Embed(ctx, texts)
	switch b.bug {
	case "reverse": // answers in another order than the texts
		slices.Reverse(vecs)
	case "opaque-errors": // loses the error classes: only the text survives
		if err != nil {
			err = errors.New(err.Error())
		}
	case "no-retry-after": // drops the server's Retry-After
		var se llm.StatusError
		if errors.As(err, &se) {
			se.RetryAfter = 0
			err = se
		}
	case "short-vectors": // cuts the last dimension off
		for i := range vecs {
			vecs[i] = vecs[i][:len(vecs[i])-1]
		}
	}
	return vecs, err
}

// embedHarness is RunEmbedder's harness over llm/ollama's embedder with
// bug (none when empty).
func embedHarness(bug string) llmtest.EmbedHarness {
	return llmtest.EmbedHarness{
		Name: "ollama-" + bug,
		API:  "ollama",
		New: func(t *testing.T, url, model string) llm.Embedder {
			e, err := ollama.NewEmbedder(ollama.EmbedConfig{URL: url, Model: model})
			require.NoError(t, err)
			if bug == "" {
				return e
			}
			return brokenEmbedder{Embedder: e, bug: bug}
		},
	}
}

// The wrapper itself is neutral: without a bug the suite passes.
func TestRunEmbedderWrapperPasses(t *testing.T) {
	llmtest.RunEmbedder(t, embedHarness(""))
}

// RunEmbedder catches a broken embedder: run in a child process against
// each deliberately broken one, exactly the subtests that check the
// broken behaviour fail, and an unrelated one still passes.
func TestRunEmbedderCatchesBugs(t *testing.T) {
	if testing.Short() {
		t.Skip("runs child test processes")
	}
	for _, c := range []struct {
		bug      string
		failures []string
		passes   string
	}{
		{"reverse", []string{"Vectors", "Batch", "Unicode"}, "ModelMissing"},
		{"opaque-errors", []string{"ModelMissing", "Unreachable", "Busy", "RetryAfter", "Dimensions", "Cancel", "Slow"}, "Vectors"},
		{"no-retry-after", []string{"RetryAfter"}, "Vectors"},
		{"short-vectors", []string{"Vectors", "Batch", "Unicode"}, "ModelMissing"},
	} {
		t.Run(c.bug, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestRunEmbedderBroken$", "-test.v", "-test.count=1")
			cmd.Env = append(os.Environ(), "LLMTEST_EMBED_BUG="+c.bug)
			out, err := cmd.CombinedOutput()
			require.Error(t, err, "the suite passed a broken embedder:\n%s", out)
			for _, f := range c.failures {
				assert.Contains(t, string(out), "--- FAIL: TestRunEmbedderBroken/"+f+" ", "output:\n%s", out)
			}
			assert.Contains(t, string(out), "--- PASS: TestRunEmbedderBroken/"+c.passes+" ", "unrelated cases still pass")
		})
	}
}

// TestRunEmbedderBroken is the child process of TestRunEmbedderCatchesBugs.
func TestRunEmbedderBroken(t *testing.T) {
	bug := os.Getenv("LLMTEST_EMBED_BUG")
	if bug == "" {
		t.Skip("child process of TestRunEmbedderCatchesBugs")
	}
	llmtest.RunEmbedder(t, embedHarness(bug))
}
