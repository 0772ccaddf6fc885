package gguf

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// ReadRepo returns the tokenizer training text of the repository at dir:
// every .go and .md file under it, in lexical path order, each followed by
// a newline. Directories whose names start with "." (.git, .ci) and
// node_modules and vendor directories are skipped. The same tree gives the
// same bytes. It returns the first file system error met.
func ReadRepo(dir string) ([]byte, error) {
	var buf bytes.Buffer
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != dir && (strings.HasPrefix(name, ".") || name == "node_modules" || name == "vendor") {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() || !(strings.HasSuffix(name, ".go") || strings.HasSuffix(name, ".md")) {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		buf.Write(b)
		buf.WriteByte('\n')
		return nil
	})
	return buf.Bytes(), err
}
