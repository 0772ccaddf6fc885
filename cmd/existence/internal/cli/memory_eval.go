package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/existence-loop/sdk/cmd/internal/storespec"
	"github.com/existence-loop/sdk/memory"
	"github.com/existence-loop/sdk/memory/memeval"
	"github.com/existence-loop/sdk/store/filestore"
	"github.com/existence-loop/sdk/store/memstore"
	"github.com/existence-loop/sdk/store/sqlitestore"
)

// memoryEvalAbout is the eval operation's part of the memory command's
// help.
const memoryEvalAbout = `

eval measures recall on a dataset of one's own (package memory/memeval):
  {prog} eval -dataset FILE -k 10 [-lexical-only] [-store memory|file|sqlite|postgres://...] [-json]
FILE is JSON Lines, one object a line (at most 1 MiB, UTF-8, read by the
strict JSON rules: a key named twice or an unknown key is an error):
  {"kind":"memory","agent":"a","id":"m1","text":"…","time":"RFC 3339","importance":0.5}
  {"kind":"query","agent":"a","text":"…","gold":["m1","m7"],"category":"temporal"}
A bad line stops eval before anything is stored, with its line number.
It loads the memories into a fresh store (memory: in-process, the default
for a FILE up to 64 MiB; sqlite, the default for a larger one, and file:
in a temporary directory, removed after; a postgres URL whose database
holds none of the dataset's agents), a thousand a write, embeds them with
-embed-model unless -lexical-only, recalls -k memories per query by
relevance alone, and prints recall_any@1/5/k, recall_all@k and MRR,
overall and per category.`

// runMemoryEval is `existence memory eval`.
func runMemoryEval(ctx context.Context, o *memoryOptions, fs *flag.FlagSet, e *env) error {
	var bad []string
	storeSet := false
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "store":
			storeSet = true
		case "dataset", "lexical-only", "k", "json", "embed-provider", "embed-url", "embed-model":
		default:
			bad = append(bad, "-"+f.Name)
		}
	})
	if len(bad) > 0 {
		return usageErr(fmt.Errorf("eval does not take %s", strings.Join(bad, ", ")))
	}
	if fs.NArg() > 0 {
		return usageErr(fmt.Errorf("eval takes no arguments, got %v", fs.Args()))
	}
	if o.dataset == "" {
		return usageErr(errors.New("eval needs -dataset FILE"))
	}
	if o.k < 1 || o.k > 100 {
		return usageErr(fmt.Errorf("-k %d: want 1–100", o.k))
	}
	if !o.lexicalOnly {
		if err := o.embed.check(); err != nil {
			return usageErr(err)
		}
	}
	f, err := os.Open(o.dataset)
	if err != nil {
		return err
	}
	defer f.Close()
	spec := o.store
	if !storeSet {
		st, err := f.Stat()
		if err != nil {
			return err
		}
		spec = evalDefaultStore(st.Size())
	}
	store, cleanup, err := evalStore(ctx, spec)
	if err != nil {
		return err
	}
	defer cleanup()
	opts := memeval.Options{Store: store, K: o.k}
	if !o.lexicalOnly {
		emb, _, err := o.embed.embedder()
		if err != nil {
			return err
		}
		opts.Embedder = emb
	}
	// Read twice (checked, then stored as it is read): the process holds
	// the queries, not the memories.
	rep, err := memeval.RunFrom(ctx, f, opts)
	if err != nil {
		return err
	}
	if o.json {
		return writeJSON(e.stdout, rep)
	}
	return rep.Text(e.stdout)
}

// evalInMemoryMax is the largest dataset, in bytes, that eval loads into
// an in-process store when no -store is given; a larger one goes to a
// SQLite file in a temporary directory, so that the process does not
// hold its memories (1e6 memories in the in-process store took 1.8 GB).
const evalInMemoryMax = 64 << 20

// evalDefaultStore is eval's store when no -store is given, for a
// dataset of size bytes: "memory" up to [evalInMemoryMax], else "sqlite".
func evalDefaultStore(size int64) string {
	if size > evalInMemoryMax {
		return "sqlite"
	}
	return "memory"
}

// evalStore opens the fresh store eval loads a dataset into: "memory",
// "file" or "sqlite" (the last two in a temporary directory that cleanup
// removes), or a store spec such as a postgres URL.
func evalStore(ctx context.Context, spec string) (memory.Store, func(), error) {
	switch spec {
	case "memory":
		return memstore.New(), func() {}, nil
	case "file", "sqlite":
		dir, err := os.MkdirTemp("", "existence-eval-")
		if err != nil {
			return nil, nil, err
		}
		rm := func() { os.RemoveAll(dir) }
		var (
			s    memory.Store
			c    io.Closer
			err2 error
		)
		if spec == "file" {
			var fsStore *filestore.Store
			fsStore, err2 = filestore.Open(dir, filestore.Options{Logger: discardLogger()})
			s, c = fsStore, io.NopCloser(nil)
		} else {
			var sq *sqlitestore.Store
			sq, err2 = sqlitestore.Open(ctx, filepath.Join(dir, "eval.db"), sqlitestore.Options{Logger: discardLogger()})
			s, c = sq, sq
		}
		if err2 != nil {
			rm()
			return nil, nil, err2
		}
		return s, func() { c.Close(); rm() }, nil
	}
	if _, err := storespec.Kind(spec); err != nil {
		return nil, nil, usageErr(fmt.Errorf("-store: %w (or memory, file, sqlite)", err))
	}
	store, closer, err := openImportStore(ctx, spec, false)
	if err != nil {
		return nil, nil, err
	}
	ms, ok := storespec.Memories(store)
	if !ok {
		closer.Close()
		return nil, nil, fmt.Errorf("%s keeps no memories", spec)
	}
	return ms, func() { closer.Close() }, nil
}
