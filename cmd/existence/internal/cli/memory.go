package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"sort"
	"strings"

	"github.com/existence-loop/sdk/cmd/internal/storespec"
	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/memory"
)

// memoryCommand is `existence memory stats|recall|reembed|forget|working`.
var memoryCommand = &command{
	name:    "memory",
	summary: "inspect and maintain an agent's long-term memories: stats, recall, reembed, forget; working shows its working memory; eval measures recall",
	args:    "stats|recall|reembed|forget|working|eval [QUERY | ID...]",
	about: `It works on the long-term memories (package memory) an agent keeps in -store,
written as run's -store: a directory, sqlite:PATH or postgres://...

  {prog} stats -agent scout                       counts: memories, embedded, pending, model, dimensions
  {prog} stats -agent scout -json                 {"memories","embedded","pending","model","dim"}
  {prog} recall -agent scout "why did the deploy fail?"
  {prog} recall -agent scout -k 10 -min-score 0.5 -relevance-only -json "rate limiter"
  {prog} reembed -agent scout -embed-model mxbai-embed-large
  {prog} forget -agent scout mem-1a2b3c4d5e6f mem-0f9e8d7c6b5a
  {prog} working -agent architect                 its working memory (run -agents, working_memory), as stored

recall embeds QUERY with -embed-model (Ollama at -embed-url, default
$OLLAMA_HOST, else http://127.0.0.1:11434) and prints the best -k memories
with the parts of their score (relevance: the cosine; recency: 0.995 per
hour since the last access; importance); -json prints them as a JSON array
of {"id","text","score","relevance","recency","importance"}. When the
embedder cannot be reached, it ranks by the query's words, recency and
importance and says so on stderr (with -relevance-only it fails instead).
A recall updates the memories' last access and access count, unless the
agent is running (another process holds its lock): then it only reads.

reembed embeds every memory of the agent again with -embed-model and moves
the agent to that model's space (also the way to embed imported memories
that are pending); forget deletes the memories with these ids. Both need
the agent stopped (they take its lock).` + memoryEvalAbout,
	setup: func(fs *flag.FlagSet) action {
		o := &memoryOptions{}
		fs.StringVar(&o.store, "store", "./trio-state", "where the memories are: a directory, sqlite:PATH or postgres://... (run's -store)")
		fs.StringVar(&o.agent, "agent", "", "the agent's id, e.g. scout (required)")
		fs.BoolVar(&o.json, "json", false, "print the result as JSON")
		fs.IntVar(&o.k, "k", 5, "recall: how many memories (1–100)")
		fs.Float64Var(&o.minScore, "min-score", memory.DefaultMinRelevance, "recall: the least cosine similarity with the query, -1–1 (the original's 0.35; -1 keeps every memory)")
		fs.BoolVar(&o.relevanceOnly, "relevance-only", false, "recall: rank by cosine alone, highest first, as the original did")
		fs.StringVar(&o.dataset, "dataset", "", "eval: the JSON Lines dataset of memories and queries")
		fs.BoolVar(&o.lexicalOnly, "lexical-only", false, "eval: embed nothing; every recall ranks by the query's words")
		o.embed.flags(fs)
		return func(ctx context.Context, e *env, args []string) error {
			if len(args) == 0 {
				return usageErr(errors.New("which operation? stats, recall, reembed or forget"))
			}
			op := args[0]
			// Flags may follow the operation: parse them again.
			if err := fs.Parse(args[1:]); err != nil {
				return usageErr(err)
			}
			if op == "eval" {
				return runMemoryEval(ctx, o, fs, e)
			}
			if err := o.check(op, fs); err != nil {
				return usageErr(err)
			}
			return runMemory(ctx, o, op, fs.Args(), e)
		}
	},
}

// memoryOptions are the memory command's flags.
type memoryOptions struct {
	store, agent  string
	json          bool
	k             int
	minScore      float64
	relevanceOnly bool
	embed         embedOptions
	dataset       string // eval
	lexicalOnly   bool   // eval
}

// memoryOps are the operations and the flags each takes besides -store,
// -agent and -json.
var memoryOps = map[string][]string{
	"stats":   nil,
	"recall":  {"k", "min-score", "relevance-only", "embed-provider", "embed-url", "embed-model"},
	"reembed": {"embed-provider", "embed-url", "embed-model"},
	"forget":  nil,
	"working": nil,
}

// check validates the operation and the flags given for it.
func (o *memoryOptions) check(op string, fs *flag.FlagSet) error {
	allowed, ok := memoryOps[op]
	if !ok {
		return fmt.Errorf("unknown operation %q: want stats, recall, reembed, forget or working", op)
	}
	var bad []string
	fs.Visit(func(f *flag.Flag) {
		if f.Name != "store" && f.Name != "agent" && f.Name != "json" && !slices.Contains(allowed, f.Name) {
			bad = append(bad, "-"+f.Name)
		}
	})
	if len(bad) > 0 {
		return fmt.Errorf("%s does not take %s", op, strings.Join(bad, ", "))
	}
	if err := memory.ValidateAgentID(o.agent); err != nil {
		if o.agent == "" {
			return errors.New("-agent ID is required")
		}
		return fmt.Errorf("-agent: %w", err)
	}
	if _, err := storespec.Kind(o.store); err != nil {
		return fmt.Errorf("-store: %w", err)
	}
	switch {
	case o.k < 1 || o.k > 100:
		return fmt.Errorf("-k %d: want 1–100", o.k)
	case math.IsNaN(o.minScore) || o.minScore < -1 || o.minScore > 1:
		return fmt.Errorf("-min-score %v: want -1–1", o.minScore)
	}
	if op == "recall" || op == "reembed" {
		return o.embed.check()
	}
	return nil
}

// runMemory runs one operation.
func runMemory(ctx context.Context, o *memoryOptions, op string, args []string, e *env) (err error) {
	switch op {
	case "recall":
		if len(args) == 0 || strings.TrimSpace(strings.Join(args, " ")) == "" {
			return usageErr(errors.New("recall needs a QUERY"))
		}
	case "forget":
		if len(args) == 0 {
			return usageErr(errors.New("forget needs the ids of the memories to forget"))
		}
	default:
		if len(args) > 0 {
			return usageErr(fmt.Errorf("%s takes no arguments, got %v", op, args))
		}
	}
	store, closer, err := openMemoryStore(ctx, o.store)
	if err != nil {
		return err
	}
	defer closer.Close()
	if op == "working" {
		return workingMemory(ctx, o, store, e.stdout)
	}
	ms, ok := storespec.Memories(store)
	if !ok {
		return fmt.Errorf("%s keeps no memories", o.store)
	}
	cfg := memory.Config{Store: ms, NoBackfill: true, Cap: -1, Logger: discardLogger()}
	url := ""
	if op == "recall" || op == "reembed" {
		if cfg.Embedder, url, err = o.embed.embedder(); err != nil {
			return err
		}
	}
	mem, err := memory.New(cfg)
	if err != nil {
		return err
	}
	defer mem.Close()

	// Writes take the agent's lock, so that a running agent's memories are
	// never changed under it; a recall of a running agent only reads.
	peek := false
	if l, ok := store.(identity.Locker); ok && op != "stats" {
		unlock, lerr := l.Lock(o.agent)
		switch {
		case lerr == nil:
			defer func() { err = errors.Join(err, unlock()) }()
		case errors.Is(lerr, identity.ErrLocked) && op == "recall":
			peek = true
			fmt.Fprintf(e.stderr, "%s: %s is running; the recall only reads (access times unchanged)\n", e.prog, o.agent)
		default:
			return lerr
		}
	}

	switch op {
	case "stats":
		return memoryStats(ctx, o, mem, e.stdout)
	case "recall":
		return memoryRecall(ctx, o, mem, strings.Join(args, " "), url, peek, e)
	case "reembed":
		n, err := mem.Reembed(ctx, o.agent)
		if err != nil {
			return fmt.Errorf("reembed with %s at %s: %w", o.embed.model, url, err)
		}
		st, err := mem.Stats(ctx, o.agent)
		if err != nil {
			return err
		}
		if o.json {
			return writeJSON(e.stdout, map[string]any{"agent": o.agent, "embedded": n, "model": st.Space.Model, "dim": st.Space.Dimensions})
		}
		fmt.Fprintf(e.stdout, "%s: %d memories embedded with %s\n", o.agent, n, st.Space)
		return nil
	default: // forget
		n, err := mem.Forget(ctx, o.agent, args...)
		if err != nil {
			return err
		}
		if o.json {
			return writeJSON(e.stdout, map[string]any{"agent": o.agent, "forgotten": n})
		}
		fmt.Fprintf(e.stdout, "%s: forgot %d of %d memories\n", o.agent, n, len(args))
		return nil
	}
}

// memoryStatsJSON is stats -json.
type memoryStatsJSON struct {
	Memories int    `json:"memories"`
	Embedded int    `json:"embedded"`
	Pending  int    `json:"pending"`
	Model    string `json:"model"`
	Dim      int    `json:"dim"`
}

func memoryStats(ctx context.Context, o *memoryOptions, mem *memory.Memory, w io.Writer) error {
	st, err := mem.Stats(ctx, o.agent)
	if err != nil {
		return err
	}
	if o.json {
		return writeJSON(w, memoryStatsJSON{Memories: st.Memories, Embedded: st.Embedded, Pending: st.Pending, Model: st.Space.Model, Dim: st.Space.Dimensions})
	}
	fmt.Fprintf(w, "%s: %d memories: %d embedded, %d pending; %s; %d important", o.agent, st.Memories, st.Embedded, st.Pending, st.Space, st.Important)
	kinds := make([]string, 0, len(st.Kinds))
	for k, n := range st.Kinds {
		kinds = append(kinds, fmt.Sprintf("%s %d", k, n))
	}
	sort.Strings(kinds)
	if len(kinds) > 0 {
		fmt.Fprintf(w, "; %s", strings.Join(kinds, ", "))
	}
	fmt.Fprintln(w)
	return nil
}

// recalledJSON is one memory of recall -json.
type recalledJSON struct {
	ID         string  `json:"id"`
	Text       string  `json:"text"`
	Score      float64 `json:"score"`
	Relevance  float64 `json:"relevance"`
	Recency    float64 `json:"recency"`
	Importance float64 `json:"importance"`
}

func memoryRecall(ctx context.Context, o *memoryOptions, mem *memory.Memory, query, url string, peek bool, e *env) error {
	minRel := o.minScore
	if minRel == 0 {
		minRel = math.SmallestNonzeroFloat64 // memory.Query reads 0 as its default, 0.35
	}
	got, err := mem.Recall(ctx, o.agent, memory.Query{Text: query, K: o.k, MinRelevance: minRel, RelevanceOnly: o.relevanceOnly, Peek: peek})
	if err != nil {
		return fmt.Errorf("recall with %s at %s: %w", o.embed.model, url, err)
	}
	if got.Fallback {
		fmt.Fprintf(e.stderr, "%s: the query could not be embedded with %s at %s (%v); ranked by its words, recency and importance\n", e.prog, o.embed.model, url, got.Err)
	}
	if o.json {
		out := make([]recalledJSON, len(got.Results))
		for i, r := range got.Results {
			out[i] = recalledJSON{ID: r.Memory.ID, Text: r.Memory.Text, Score: r.Score, Relevance: r.Relevance, Recency: r.Recency, Importance: r.Importance}
		}
		return writeJSON(e.stdout, out)
	}
	if len(got.Results) == 0 {
		if got.Compared == 0 {
			fmt.Fprintf(e.stdout, "%s has no memories to recall\n", o.agent)
		} else {
			fmt.Fprintf(e.stdout, "no memory of %s matches: compared with %d memories, none reached relevance %g (-min-score)\n", o.agent, got.Compared, o.minScore)
		}
		return nil
	}
	for _, r := range got.Results {
		fmt.Fprintf(e.stdout, "%.3f  relevance %.3f  recency %.3f  importance %.2f  %s  %s\n",
			r.Score, r.Relevance, r.Recency, r.Importance, r.Memory.ID, strings.Join(strings.Fields(r.Memory.Text), " "))
	}
	return nil
}

// openMemoryStore opens the store spec names, which must exist (a
// directory or SQLite file is not created).
func openMemoryStore(ctx context.Context, spec string) (identity.Store, io.Closer, error) {
	if kind, _ := storespec.Kind(spec); kind == "dir" || kind == "sqlite" {
		if _, err := os.Stat(strings.TrimPrefix(spec, "sqlite:")); err != nil {
			return nil, nil, fmt.Errorf("no store at %s: %w", spec, err)
		}
	}
	return openImportStore(ctx, spec, false)
}

// workingMemory prints the agent's working memory (existence.WorkingMemory)
// as stored: indented JSON, "(none)" when it has none, and the note on a
// refused one; with -json, one object {"working_memory", "note"}.
func workingMemory(ctx context.Context, o *memoryOptions, store identity.Store, w io.Writer) error {
	st, err := store.Load(ctx, o.agent)
	if err != nil {
		return err
	}
	if o.json {
		wm := st.WorkingMemory
		if len(wm) == 0 {
			wm = json.RawMessage("null")
		}
		return writeJSON(w, struct {
			WorkingMemory json.RawMessage `json:"working_memory"`
			Note          string          `json:"note,omitempty"`
		}{wm, st.WorkingMemoryNote})
	}
	if len(st.WorkingMemory) == 0 {
		fmt.Fprintln(w, "(none)")
	} else {
		var b bytes.Buffer
		if err := json.Indent(&b, st.WorkingMemory, "", "  "); err != nil {
			return fmt.Errorf("%s: the stored working memory: %w", o.agent, err)
		}
		fmt.Fprintln(w, b.String())
	}
	if st.WorkingMemoryNote != "" {
		fmt.Fprintln(w, "last refused:", st.WorkingMemoryNote)
	}
	return nil
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}
