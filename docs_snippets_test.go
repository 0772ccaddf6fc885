package sdk_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// api is what the module exports, by package name (the name a snippet
// uses as qualifier): the exported top-level names, and per exported type
// its methods and fields.
type api map[string]*pkgAPI

type pkgAPI struct {
	names  map[string]bool
	fields map[string]map[string]bool // type → fields and methods
}

// moduleAPI parses the module's non-test, non-internal Go files (names
// only: no type checking) into an api.
func moduleAPI(t *testing.T) api {
	t.Helper()
	a := api{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			base := d.Name()
			if path != "." && (strings.HasPrefix(base, ".") || strings.HasPrefix(base, "_") || base == "testdata" || base == "internal" || base == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		name := f.Name.Name
		if name == "main" {
			return nil
		}
		p := a[name]
		if p == nil {
			p = &pkgAPI{names: map[string]bool{}, fields: map[string]map[string]bool{}}
			a[name] = p
		}
		member := func(typ, name string) {
			if p.fields[typ] == nil {
				p.fields[typ] = map[string]bool{}
			}
			p.fields[typ][name] = true
		}
		for _, decl := range f.Decls {
			switch decl := decl.(type) {
			case *ast.FuncDecl:
				if decl.Recv == nil {
					p.names[decl.Name.Name] = true
					continue
				}
				typ := decl.Recv.List[0].Type
				if s, ok := typ.(*ast.StarExpr); ok {
					typ = s.X
				}
				switch x := typ.(type) {
				case *ast.IndexExpr:
					typ = x.X
				case *ast.IndexListExpr:
					typ = x.X
				}
				if id, ok := typ.(*ast.Ident); ok {
					member(id.Name, decl.Name.Name)
				}
			case *ast.GenDecl:
				for _, spec := range decl.Specs {
					switch spec := spec.(type) {
					case *ast.ValueSpec:
						for _, n := range spec.Names {
							p.names[n.Name] = true
						}
					case *ast.TypeSpec:
						p.names[spec.Name.Name] = true
						var list *ast.FieldList
						switch st := spec.Type.(type) {
						case *ast.StructType:
							list = st.Fields
						case *ast.InterfaceType:
							list = st.Methods
						}
						if list == nil {
							member(spec.Name.Name, "") // a type with no fields
							continue
						}
						for _, fld := range list.List {
							for _, n := range fld.Names {
								member(spec.Name.Name, n.Name)
							}
							if len(fld.Names) == 0 { // embedded
								typ := fld.Type
								if s, ok := typ.(*ast.StarExpr); ok {
									typ = s.X
								}
								switch x := typ.(type) {
								case *ast.Ident:
									member(spec.Name.Name, x.Name)
								case *ast.SelectorExpr:
									member(spec.Name.Name, x.Sel.Name)
								}
							}
						}
					}
				}
			}
		}
		return nil
	})
	require.NoError(t, err)
	return a
}

// snippet is a piece of documentation that names API.
type snippet struct {
	where string // file:line
	text  string
	code  bool // a fenced ```go block, parsed as Go
}

var (
	fence      = regexp.MustCompile("(?s)```go\n(.*?)```")
	inlineCode = regexp.MustCompile("`[^`\n]+`")
)

// markdownSnippets returns the ```go blocks and the inline code spans of
// a Markdown file.
func markdownSnippets(t *testing.T, path string) []snippet {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	text := string(data)
	line := func(off int) string { return fmt.Sprintf("%s:%d", path, strings.Count(text[:off], "\n")+1) }
	var out []snippet
	for _, m := range fence.FindAllStringSubmatchIndex(text, -1) {
		out = append(out, snippet{where: line(m[2]), text: text[m[2]:m[3]], code: true})
	}
	prose := fence.ReplaceAllStringFunc(text, func(s string) string { return strings.Repeat(" ", len(s)) })
	prose = regexp.MustCompile("(?s)```.*?```").ReplaceAllStringFunc(prose, func(s string) string { return strings.Repeat(" ", len(s)) })
	for _, m := range inlineCode.FindAllStringIndex(prose, -1) {
		out = append(out, snippet{where: line(m[0]), text: prose[m[0]:m[1]]})
	}
	return out
}

// docGoSnippets returns the package comment of a doc.go file.
func docGoSnippets(t *testing.T, path string) []snippet {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, parser.ParseComments|parser.PackageClauseOnly)
	require.NoError(t, err)
	if f.Doc == nil {
		return nil
	}
	return []snippet{{where: fset.Position(f.Doc.Pos()).String(), text: f.Doc.Text()}}
}

// qualified matches pkg.Name and pkg.Type.Member in text.
var qualified = regexp.MustCompile(`(?:^|[^\w./-])([a-z][a-z0-9]*)\.([A-Z]\w*)(?:\.([A-Z]\w*))?`)

// member matches Type.Member in text (e.g. Status.Usage).
var member = regexp.MustCompile(`(?:^|[^\w./-])([A-Z]\w*)\.([A-Z]\w*)`)

// checkText reports the pkg.Name references in text that the module does
// not export (it skips qualifiers that are not module packages), and the
// Type.Member references where some package has the type but none of
// those types has the field or method.
func (a api) checkText(s snippet) []string {
	var bad []string
	for _, m := range qualified.FindAllStringSubmatch(s.text, -1) {
		bad = append(bad, a.check(m[1], m[2], m[3])...)
	}
	for _, m := range member.FindAllStringSubmatch(s.text, -1) {
		known, found := false, false
		for _, p := range a {
			if f := p.fields[m[1]]; f != nil {
				known = true
				found = found || f[m[2]]
			}
		}
		if known && !found {
			bad = append(bad, m[1]+"."+m[2])
		}
	}
	return bad
}

func (a api) check(pkg, name, member string) []string {
	p := a[pkg]
	if p == nil {
		return nil
	}
	if !p.names[name] {
		return []string{pkg + "." + name}
	}
	if member != "" && p.fields[name] != nil && !p.fields[name][member] {
		return []string{pkg + "." + name + "." + member}
	}
	return nil
}

// checkCode parses a ```go block (as declarations, else as statements in
// a function body) and reports the module names it uses that do not
// exist: pkg.Name, and the keys of pkg.Type{Key: …} literals. An
// identifier declared in the snippet is not a package.
func (a api) checkCode(t *testing.T, s snippet) []string {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "snippet.go", "package p\n"+s.text, 0)
	if err != nil {
		f, err = parser.ParseFile(fset, "snippet.go", "package p\nfunc _() {\n"+s.text+"\n}", 0)
	}
	if err != nil {
		t.Errorf("%s: a ```go block that is not Go: %v", s.where, err)
		return nil
	}
	unresolved := map[*ast.Ident]bool{}
	for _, id := range f.Unresolved {
		unresolved[id] = true
	}
	pkgOf := func(e ast.Expr) (pkg, name string, ok bool) {
		switch x := e.(type) {
		case *ast.IndexExpr:
			e = x.X
		case *ast.IndexListExpr:
			e = x.X
		}
		sel, ok := e.(*ast.SelectorExpr)
		if !ok {
			return "", "", false
		}
		id, ok := sel.X.(*ast.Ident)
		if !ok || id.Obj != nil || a[id.Name] == nil {
			return "", "", false
		}
		return id.Name, sel.Sel.Name, true
	}
	var bad []string
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.SelectorExpr:
			if pkg, name, ok := pkgOf(n); ok {
				bad = append(bad, a.check(pkg, name, "")...)
			}
		case *ast.CompositeLit:
			pkg, name, ok := pkgOf(n.Type)
			if !ok || a[pkg].fields[name] == nil {
				return true
			}
			for _, elt := range n.Elts {
				if kv, ok := elt.(*ast.KeyValueExpr); ok {
					if key, ok := kv.Key.(*ast.Ident); ok && !a[pkg].fields[name][key.Name] {
						bad = append(bad, pkg+"."+name+"{"+key.Name+"}")
					}
				}
			}
		}
		return true
	})
	return bad
}

// TestDocsNameExistingAPI: every pkg.Name that README.md, docs/*.md,
// examples/*/README.md and the doc.go files mention — in ```go blocks
// (parsed: qualified names and the keys of struct literals), in inline
// code and in package comments — is exported by the module's package of
// that name, so that documentation cannot drift from the API unnoticed.
func TestDocsNameExistingAPI(t *testing.T) {
	a := moduleAPI(t)
	var files []string
	for _, pattern := range []string{"README.md", "docs/*.md", "examples/*/README.md"} {
		m, err := filepath.Glob(pattern)
		require.NoError(t, err)
		files = append(files, m...)
	}
	var docs []string
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		// The module's internal/ is no API (moduleAPI skips it): its doc.go files
		// name their own unexported-to-users types.
		if d.IsDir() && path != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "node_modules" || path == "internal") {
			return filepath.SkipDir
		}
		if d.Name() == "doc.go" {
			docs = append(docs, path)
		}
		return nil
	})
	require.NoError(t, err)
	require.NotEmpty(t, files)
	require.NotEmpty(t, docs)

	var bad []string
	for _, path := range files {
		for _, s := range markdownSnippets(t, path) {
			var got []string
			if s.code {
				got = a.checkCode(t, s)
			}
			got = append(got, a.checkText(s)...)
			for _, b := range got {
				bad = append(bad, s.where+": "+b)
			}
		}
	}
	for _, path := range docs {
		for _, s := range docGoSnippets(t, path) {
			for _, b := range a.checkText(s) {
				bad = append(bad, s.where+": "+b)
			}
		}
	}
	slices.Sort(bad)
	bad = slices.Compact(bad)
	assert.Empty(t, bad, "names the module does not export")
}

// TestAPICheckerFindsDrift: the checker reports a name that does not
// exist, in code and in prose, and a field a literal does not have.
func TestAPICheckerFindsDrift(t *testing.T) {
	a := moduleAPI(t)
	code := snippet{where: "x", code: true, text: "v := prompt.NewValues()\n_ = existence.Config{ID: \"a\", Bogus: 1}\n_ = prompt.NewKey[string](\"k\")\n"}
	assert.ElementsMatch(t, []string{"prompt.NewValues", "existence.Config{Bogus}"}, a.checkCode(t, code))
	assert.Equal(t, []string{"prompt.NewValues"}, a.checkText(snippet{text: "use `prompt.NewValues()` or `prompt.Solo`"}))
	assert.Equal(t, []string{"runner.Config.Bogus"}, a.checkText(snippet{text: "`runner.Config.Bogus` and `runner.Config.AutonomyWorkers`"}))
	shadow := snippet{where: "y", code: true, text: "prompt := x()\nprompt.NewValues()\n"}
	assert.Empty(t, a.checkCode(t, shadow), "a local variable named like a package is not the package")
}

// byModulePath matches a go command that fetches this module by its path,
// which fails while the module is not published.
var byModulePath = regexp.MustCompile(`go (install|get|run) ` + regexp.QuoteMeta(module) + `\S*`)

// TestInstallInstructionsWorkFromAClone: no command in the documentation
// (fenced blocks of README.md, docs/*.md and examples/*/README.md; the
// doc.go files' comments) installs or runs the module by its path: it is
// not published, so such a command fails. `go install ./cmd/existence`
// from a clone works.
func TestInstallInstructionsWorkFromAClone(t *testing.T) {
	var bad []string
	check := func(where, text string) {
		for _, m := range byModulePath.FindAllString(text, -1) {
			bad = append(bad, where+": "+m)
		}
	}
	for _, pattern := range []string{"README.md", "docs/*.md", "examples/*/README.md"} {
		files, err := filepath.Glob(pattern)
		require.NoError(t, err)
		for _, path := range files {
			data, err := os.ReadFile(path)
			require.NoError(t, err)
			for _, block := range regexp.MustCompile("(?s)```.*?```").FindAllString(string(data), -1) {
				check(path, block)
			}
		}
	}
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if d.Name() == "doc.go" {
			for _, s := range docGoSnippets(t, path) {
				check(s.where, s.text)
			}
		}
		return nil
	})
	require.NoError(t, err)
	assert.Empty(t, bad, "while the module is unpublished, install from a clone: go install ./cmd/existence")
	readme, err := os.ReadFile("README.md")
	require.NoError(t, err)
	assert.Contains(t, string(readme), "go install ./cmd/existence")
}

// TestReadmeStaysShort: the README is the first page a user reads; it
// stays under 15 KiB, and the rest goes to docs/.
func TestReadmeStaysShort(t *testing.T) {
	info, err := os.Stat("README.md")
	require.NoError(t, err)
	assert.Less(t, info.Size(), int64(15*1024), "README.md: move detail to docs/")
}
