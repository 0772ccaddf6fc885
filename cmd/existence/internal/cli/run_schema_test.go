package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	validator "github.com/santhosh-tekuri/jsonschema/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/existence"
	"github.com/existence-loop/sdk/existence/runner"
	"github.com/existence-loop/sdk/existence/workspace"
	"github.com/existence-loop/sdk/hollow"
	"github.com/existence-loop/sdk/llm/llmtest"
	"github.com/existence-loop/sdk/prompt"
	"github.com/existence-loop/sdk/store/memstore"
)

// sentSchemas returns every JSON Schema the trio sends to a model: each
// tool's argument schema (the workspace tools and send_message) and the
// existence cycle's response format.
func sentSchemas(t *testing.T, names []idName) map[string]json.RawMessage {
	t.Helper()
	ws, err := workspace.Open(t.TempDir(), workspace.Limits{})
	require.NoError(t, err)
	t.Cleanup(func() { ws.Close() })
	out := map[string]json.RawMessage{"response format": prompt.Schema()}
	tools := append(ws.Tools(), sendMessage(func() *runner.Runner { return nil }, "scout", names))
	for _, tool := range tools {
		out["tool "+tool.Name()] = tool.Schema()
	}
	return out
}

// Every schema the SDK sends is valid JSON Schema (draft
// 2020-12, checked against its meta-schema).
func TestEverySentSchemaIsValidJSONSchema(t *testing.T) {
	names, err := agentNames(context.Background(), memstore.New(), members)
	require.NoError(t, err)
	meta, err := validator.Compile("https://json-schema.org/draft/2020-12/schema")
	require.NoError(t, err)
	for name, raw := range sentSchemas(t, names) {
		var doc any
		require.NoError(t, json.Unmarshal(raw, &doc), name)
		assert.NoError(t, meta.Validate(doc), "%s: %s", name, raw)
		c := validator.NewCompiler()
		c.Draft = validator.Draft2020
		url := "mem://schemas/" + strings.ReplaceAll(name, " ", "_")
		require.NoError(t, c.AddResource(url, bytes.NewReader(raw)), name)
		_, err := c.Compile(url)
		assert.NoError(t, err, name)
	}
}

// send_message's schema names the actual peers, with their names
// and ids, in full.
func TestSendMessageSchemaNamesThePeers(t *testing.T) {
	names := []idName{{"scout", "Titan"}, {"analyst", "Cipher"}, {"builder", "Vault"}}
	tool := sendMessage(func() *runner.Runner { return nil }, "analyst", names)
	var s struct {
		Properties map[string]struct {
			Description string `json:"description"`
		} `json:"properties"`
	}
	require.NoError(t, json.Unmarshal(tool.Schema(), &s))
	assert.Equal(t, "the peer's name or id: Titan (scout), Vault (builder)", s.Properties["to"].Description)
	assert.Equal(t, "the message; the peer is shown at most 200 characters of it", s.Properties["text"].Description)
	assert.Contains(t, tool.Description(), "(Titan (scout), Vault (builder))")
}

// No description is cut. invopop/jsonschema splits a
// `jsonschema:"..."` tag at every unescaped comma, so a description with a
// comma in it is cut there unless the comma is escaped ("\\,"). This scans
// every struct tag of the module for that mistake, except in files using
// the MCP SDK, whose schema package reads the tag differently.
func TestNoSchemaDescriptionIsCut(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", "..", "..", ".."))
	require.NoError(t, err)
	checked := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && path != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, src, parser.SkipObjectResolution)
		if err != nil {
			return nil // not ours to judge here
		}
		for _, imp := range f.Imports {
			// The MCP SDK's schemas (google/jsonschema-go) read the whole
			// tag as the description: commas are fine there.
			if strings.HasPrefix(imp.Path.Value, `"github.com/modelcontextprotocol/go-sdk`) {
				return nil
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			field, ok := n.(*ast.Field)
			if !ok || field.Tag == nil {
				return true
			}
			raw, err := strconv.Unquote(field.Tag.Value)
			if err != nil {
				return true
			}
			tag, ok := reflect.StructTag(raw).Lookup("jsonschema")
			if !ok {
				return true
			}
			checked++
			for _, part := range splitUnescaped(tag) {
				// Every part is key or key=value; a cut description
				// leaves a part that starts with a space or has no key.
				if strings.HasPrefix(part, " ") || (!strings.Contains(part, "=") && strings.Contains(part, " ")) {
					t.Errorf("%s: jsonschema tag %q is cut at a comma before %q: escape it as \\\\,", path, tag, part)
				}
			}
			return true
		})
		return nil
	})
	require.NoError(t, err)
	assert.NotZero(t, checked, "no jsonschema tags found: the scan is broken")
}

// splitUnescaped splits s at commas not preceded by a backslash.
func splitUnescaped(s string) []string {
	var parts []string
	start := 0
	for i := 0; i < len(s); i++ {
		if s[i] == ',' && (i == 0 || s[i-1] != '\\') {
			parts = append(parts, s[start:i])
			start = i + 1
		}
	}
	return append(parts, s[start:])
}

// Each agent's name comes from its own profile.json, even when
// names.json disagrees; names.json names only agents without a profile
// (here analyst and builder, which names.json lists with no files), and the
// trio's defaults (scout=Cedar, analyst=Cipher, builder=Vault) apply only
// to agents created fresh. Every prompt and every tool description uses
// the imported names.
func TestImportedNamesWinOverNamesJSONAndDefaults(t *testing.T) {
	pkg, _ := os.Getwd()
	src := filepath.Join(pkg, "..", "..", "..", "..", "hollow", "testdata", "hollow-memory")
	dir := t.TempDir()
	require.NoError(t, os.CopyFS(dir, os.DirFS(src)))
	// names.json disagrees with profile.json (scout is Titan there) and
	// with the trio's defaults.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "identity", "names.json"), []byte(`{"Cedar": "analyst", "Cipher": "builder", "Vault": "scout"}`), 0o644))

	ctx := context.Background()
	store := memstore.New()
	_, err := hollow.Import(ctx, dir, store, hollow.Options{})
	require.NoError(t, err)
	names, err := agentNames(ctx, store, members)
	require.NoError(t, err)
	assert.Equal(t, []idName{{"scout", "Titan"}, {"analyst", "Cedar"}, {"builder", "Cipher"}}, names)

	desc := func(self string) string {
		tool := sendMessage(func() *runner.Runner { return nil }, self, names)
		return tool.Description() + " " + string(tool.Schema())
	}
	assert.Contains(t, desc("analyst"), "Titan (scout), Cipher (builder)")
	assert.Contains(t, desc("scout"), "Cedar (analyst), Cipher (builder)")
	for _, id := range []string{"scout", "analyst", "builder"} {
		assert.NotContains(t, desc(id), "Vault", "names.json's name for scout is not used")
	}

	r, err := runner.New(runner.Config{Store: store})
	require.NoError(t, err)
	t.Cleanup(func() { r.Close() })
	for _, m := range members {
		_, err := r.Add(ctx, existence.Config{ID: m.id, Name: m.name, Model: llmtest.NewFake()})
		require.NoError(t, err)
	}
	want := map[string]string{"scout": "Titan", "analyst": "Cedar", "builder": "Cipher"}
	for _, a := range r.Agents() {
		p, err := a.Preview(ctx)
		require.NoError(t, err)
		assert.NotContains(t, p.Text, "Vault", a.ID())
		assert.Contains(t, p.Text, "You are "+want[a.ID()]+".\n", a.ID())
		for id, name := range want {
			if id != a.ID() {
				assert.Contains(t, p.Text, "\n  "+name+": ", a.ID())
			}
		}
	}
}

// Fresh agents take the trio's defaults.
func TestFreshAgentsTakeTheDefaultNames(t *testing.T) {
	names, err := agentNames(context.Background(), memstore.New(), members)
	require.NoError(t, err)
	assert.Equal(t, []idName{{"scout", "Cedar"}, {"analyst", "Cipher"}, {"builder", "Vault"}}, names)
}

// The original's directive told the agent not to repeat itself.
func TestTrioProhibitionsSayDoNotRepeat(t *testing.T) {
	assert.True(t, strings.HasSuffix(trioProhibitions, " Do NOT repeat goals you've already done."), trioProhibitions)
}
