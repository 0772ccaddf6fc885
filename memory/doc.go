// Package memory is agents' long-term semantic memory: what they did,
// stored as text with an embedding, and recalled by what matters for a
// question. It replaces the original's agents/semantic_memory.py
// (hollow-agentOS) and ranks as Generative Agents does.
//
//	mem, err := memory.New(memory.Config{Store: store, Embedder: embedder})
//	_, err = mem.Remember(ctx, "scout", memory.Note{Text: "FAILED: the deploy broke on a missing env var", Kind: memory.KindFailure})
//	got, err := mem.Recall(ctx, "scout", memory.Query{Text: "how did the last deploy go?"})
//	for _, r := range got.Results { fmt.Println(r.Score, r.Memory.Text) }
//
// The package sits low in the module: it imports llm (for [llm.Embedder])
// and nothing of the loop or the stores. The stores import it: every
// store of the SDK (store/memstore, store/filestore,
// store/sqlitestore, store/pgstore) implements [Store] beside
// identity.Store, so one store holds an agent's state and its memories,
// and store/storetest.RunMemory is their one conformance suite.
// [MemoryStore] is the in-process store. The existence loop uses a
// [Memory] through existence.Config.Memory.LongTerm; existence/toolloop stores
// each step's outcome and recalls before a goal.
//
// # Records
//
// A [Record] is one memory: id, agent, text, [Kind] (observation,
// outcome, failure, reflection, imported), importance (0–1), an important
// mark, creation and last-access times, access count, and the embedding
// model, dimensions and vector. Vectors are scaled to unit length once,
// when stored, and kept as float32, so that a dot product is a cosine.
// An agent holds one memory per distinct text: storing a known text
// raises its access count instead.
//
// # Recall
//
// [Memory.Recall] compares the query's vector with every memory of the
// agent, exactly (no approximate index: 10,000 memories of 768
// dimensions are 30 MB, scanned in about 2 ms by BLAS's sgemv (gonum's
// blas32), split across GOMAXPROCS; see BenchmarkRecall and
// cmd/memorybench), and asks the store for the query's words ([Searcher]:
// BM25 in process, FTS5 in SQLite, tsvector in PostgreSQL; [Terms]).
// Candidates have a cosine of at least 0.35 (the original's threshold,
// [Query].MinRelevance) or matching words; each gets score =
// w_rel·relevance + w_rec·recency + w_imp·importance, every part min-max
// normalised over the candidates, recency being 0.995 to the power of
// the hours since the last access, highest for the most recent
// ([Weights], Generative Agents). Relevance fuses a cosine part and a
// lexical part, (cosine + lexical) / 2, or the lexical part alone when
// the query or the memory has no vector, so that a memory pending its
// vector is found by its words. Each [Result] carries its parts, raw and
// normalised, so that weights can be tuned. RelevanceOnly ranks by cosine
// alone, ties oldest first: exactly the original's order. A recall
// updates the last access and access count of what it returns (Peek
// does not).
//
// # Nothing blocks on embeddings
//
// Embedding calls are bounded ([Config].EmbedTimeout, 10 s). When the
// embedder is missing, down, busy (503) or slow, [Memory.Remember] stores
// the memory as text, pending ([EventPending]), and a background backfill
// embeds it later, with exponential backoff (2 s doubling to 5 minutes,
// longer when the server's Retry-After says so; [EventBackfillFailed]).
// A recall whose query cannot be embedded ranks by its words, recency
// and importance (recency and importance alone when no word matches) and
// says so ([EventRecallFallback]). Nothing is lost: the
// original lost the vectors of 98% of its memories to 503s.
//
// # Embedding spaces never mix
//
// A [Space] is a model and its dimensions. An agent's memories have one;
// a query vector, or an embedder, of another model or dimensions is
// refused with a [*SpaceError] naming both. [Memory.Reembed] moves an
// agent to the embedder's space: everything is embedded again and
// written at once, or nothing changes.
//
// # Capacity
//
// An agent keeps at most [Config].Cap memories (10,000). Past it, the
// lowest-value ones (superseded first, then by recency and importance)
// are evicted ([EventEvicted]); memories marked Important never are. A
// new vector whose nearest memory of the same kind has a cosine of 0.95
// or more supersedes it ([EventMerged]), and a memory naming a fact
// ([Note].Fact) supersedes the older ones of that fact
// ([EventSuperseded]): the older are kept, marked ([Record].SupersededBy),
// and left out of recalls, so that near-duplicates never fill the top K
// together. [Memory.Consolidate] does the same over all of an agent's
// memories.
// [Memory.Counters] counts every store, merge, eviction, backfill and
// fallback.
//
// # Events
//
// Every [Event] goes to the agent's subscriber ([Memory.Subscribe]; the
// existence package subscribes each agent's observer, which receives each
// one whole as an existence event of kind "memory", in its Memory field)
// and to [Config].OnEvent.
package memory
