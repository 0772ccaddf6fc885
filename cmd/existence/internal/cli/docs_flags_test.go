package cli

import (
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// docSections are the headings of docs/operations.md under which each
// command's flags are documented.
var docSections = map[string][]string{
	"run":      {"### `existence run`"},
	"swarm":    {"### `existence swarm`"},
	"serve":    {"### `existence serve`"},
	"tui":      {"### `existence tui`"},
	"memory":   {"### `existence memory`"},
	"import":   {"## Importing hollow-agentOS agents"},
	"simulate": {"## Simulate long runs"},
	"version":  {"### `existence import`, `simulate`, `version`"},
	"init":     {"### `existence init`"},
	"help":     nil,
}

// section returns the text of doc from the heading line to the next
// heading of the same or a higher level.
func section(t *testing.T, doc, heading string) string {
	t.Helper()
	i := strings.Index(doc, "\n"+heading+"\n")
	require.GreaterOrEqual(t, i, 0, "docs/operations.md has no heading %q", heading)
	level := strings.Index(heading, " ")
	rest := doc[i+1+len(heading):]
	for j := 0; j < len(rest); {
		k := strings.Index(rest[j:], "\n#")
		if k < 0 {
			break
		}
		line := rest[j+k+1:]
		n := len(line) - len(strings.TrimLeft(line, "#"))
		if n <= level && strings.HasPrefix(line[n:], " ") {
			return rest[:j+k]
		}
		j += k + 1
	}
	return rest
}

// TestEveryFlagIsDocumented: every flag a command defines (but the hidden
// aliases of old names) is named in that command's section of
// docs/operations.md, as `-name` in a table or prose or in an example.
func TestEveryFlagIsDocumented(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "..", "..", "docs", "operations.md"))
	require.NoError(t, err)
	doc := string(data)
	for _, c := range commands {
		t.Run(c.name, func(t *testing.T) {
			headings, ok := docSections[c.name]
			require.True(t, ok, "docSections has no entry for %s: add its section of docs/operations.md", c.name)
			var text strings.Builder
			for _, h := range headings {
				text.WriteString(section(t, doc, h))
			}
			fs := setupOnly(c)
			fs.VisitAll(func(f *flag.Flag) {
				if hiddenFlags[fs.Name()+"/"+f.Name] {
					return
				}
				re := regexp.MustCompile("(^|[\\s`(])-" + regexp.QuoteMeta(f.Name) + "([\\s`=,)]|$)")
				if !re.MatchString(text.String()) {
					t.Errorf("docs/operations.md (%s) does not name `-%s` (%s)", strings.Join(headings, ", "), f.Name, f.Usage)
				}
			})
		})
	}
}
