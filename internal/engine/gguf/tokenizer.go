package gguf

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Token types, as GGUF's tokenizer.ggml.token_type stores them (llama.cpp's
// llama_token_type).
const (
	TokenNormal  int32 = 1
	TokenControl int32 = 3
)

// The special tokens every generated vocabulary starts with, at ids 0, 1
// and 2, as in SmolLM2: <|endoftext|> is the unknown token, <|im_start|> the
// beginning of sequence (ChatML's turn opener) and <|im_end|> the end of
// sequence and padding (ChatML's turn closer).
const (
	EndOfText = "<|endoftext|>"
	IMStart   = "<|im_start|>"
	IMEnd     = "<|im_end|>"
)

// Special token ids in every generated vocabulary.
const (
	UnknownID = 0
	BOSID     = 1
	EOSID     = 2
	PaddingID = 2
)

// firstByteID is the id of the token for byte 0; bytes 0–255 follow in
// order, then the merged tokens in the order they were learned.
const firstByteID = 3

// MinVocab is the smallest vocabulary [Train] accepts: the three special
// tokens and the 256 byte tokens.
const MinVocab = firstByteID + 256

// ErrVocabSize is returned by [Train] for a vocabulary below [MinVocab].
var ErrVocabSize = errors.New("gguf: vocabulary size below 259 (3 special + 256 byte tokens)")

// Tokenizer is a byte-level BPE vocabulary in GGUF's "gpt2" form: token
// texts are byte strings written with GPT-2's byte-to-character table (a
// space is "Ġ", a newline "Ċ"), merges are "left right" pairs of such texts,
// highest priority first. Every byte has a token, so any text encodes
// losslessly. The pre-tokenizer is llama.cpp's "smollm": each digit alone,
// then GPT-2's split ('s 't 're 've 'm 'll 'd, an optional space and a run of
// letters, an optional space and a run of other non-space characters,
// whitespace runs that leave their last space to the next word).
//
// A Tokenizer from [Train] or [TokenizerFrom] is safe for concurrent use;
// one assembled by hand builds its lookup tables on first use, so make one
// call before sharing it.
type Tokenizer struct {
	// Tokens holds the token texts, indexed by id.
	Tokens []string
	// Types holds each token's type ([TokenNormal] or [TokenControl]).
	Types []int32
	// Merges holds the merge rules, highest priority first.
	Merges []string

	ids   map[string]int32
	ranks map[[2]string]int
}

// byteChar maps a byte to the character GPT-2's byte-level BPE writes for
// it; charByte is the inverse.
var (
	byteChar [256]rune
	charByte = map[rune]byte{}
)

func init() {
	n := 0
	for b := 0; b < 256; b++ {
		if (b >= '!' && b <= '~') || (b >= 0xa1 && b <= 0xac) || (b >= 0xae && b <= 0xff) {
			byteChar[b] = rune(b)
		} else {
			byteChar[b] = rune(256 + n)
			n++
		}
		charByte[byteChar[b]] = byte(b)
	}
}

// PreTokenize splits text into the chunks BPE merges never cross, as
// llama.cpp's "smollm" pre-tokenizer does (see [Tokenizer]). The chunks
// concatenate back to text, byte for byte, even for invalid UTF-8.
func PreTokenize(text string) []string {
	var out []string
	start := 0
	for i := 0; i < len(text); {
		r, w := utf8.DecodeRuneInString(text[i:])
		if r != utf8.RuneError && unicode.IsNumber(r) {
			out = splitGPT2(out, text[start:i])
			out = append(out, text[i:i+w])
			start = i + w
		}
		i += w
	}
	return splitGPT2(out, text[start:])
}

type class int

const (
	classSpace class = iota
	classLetter
	classNumber
	classOther
	classEnd
)

func classOf(s string, i int) (class, int) {
	if i >= len(s) {
		return classEnd, 0
	}
	r, w := utf8.DecodeRuneInString(s[i:])
	switch {
	case r == utf8.RuneError && w <= 1:
		return classOther, w
	case unicode.IsSpace(r):
		return classSpace, w
	case unicode.IsLetter(r):
		return classLetter, w
	case unicode.IsNumber(r):
		return classNumber, w
	}
	return classOther, w
}

// run returns the end of the run of class c starting at i.
func run(s string, i int, c class) int {
	for {
		k, w := classOf(s, i)
		if k != c {
			return i
		}
		i += w
	}
}

// splitGPT2 appends GPT-2's pre-tokenizer chunks of s to out.
func splitGPT2(out []string, s string) []string {
	for i := 0; i < len(s); {
		if s[i] == '\'' {
			rest := s[i+1:]
			n := 0
			switch {
			case strings.HasPrefix(rest, "re"), strings.HasPrefix(rest, "ve"), strings.HasPrefix(rest, "ll"):
				n = 3
			case len(rest) > 0 && strings.IndexByte("stmd", rest[0]) >= 0:
				n = 2
			}
			if n > 0 {
				out = append(out, s[i:i+n])
				i += n
				continue
			}
		}
		c, w := classOf(s, i)
		j := i
		if s[i] == ' ' {
			if c2, _ := classOf(s, i+1); c2 == classLetter || c2 == classNumber || c2 == classOther {
				c, j = c2, i+1
				_, w = classOf(s, j)
			}
		}
		switch c {
		case classLetter, classNumber, classOther:
			end := run(s, j+w, c)
			out = append(out, s[i:end])
			i = end
		default: // whitespace
			end := run(s, i, classSpace)
			if next, _ := classOf(s, end); next != classEnd && end-i > w {
				// \s+(?!\S): leave the last whitespace character to the
				// next chunk.
				_, lw := utf8.DecodeLastRuneInString(s[i:end])
				end -= lw
			}
			out = append(out, s[i:end])
			i = end
		}
	}
	return out
}

// Train learns a byte-level BPE vocabulary of at most vocabSize tokens
// (including the 3 special and 256 byte tokens) from corpus,
// deterministically: the same corpus and size give the same vocabulary. Each
// step merges the most frequent adjacent pair of tokens within the
// pre-tokenizer's chunks (ties broken by the pair's texts, in byte order);
// training stops at vocabSize tokens or when no pair occurs twice. It
// returns [ErrVocabSize] for a size below [MinVocab] and the context's error
// if ctx ends.
func Train(ctx context.Context, corpus []byte, vocabSize int) (*Tokenizer, error) {
	if vocabSize < MinVocab {
		return nil, fmt.Errorf("%w: %d", ErrVocabSize, vocabSize)
	}
	t := &Tokenizer{}
	for _, s := range []string{EndOfText, IMStart, IMEnd} {
		t.Tokens = append(t.Tokens, s)
		t.Types = append(t.Types, TokenControl)
	}
	for b := 0; b < 256; b++ {
		t.Tokens = append(t.Tokens, string(byteChar[b]))
		t.Types = append(t.Types, TokenNormal)
	}
	t.index()

	// Count the chunks, then hold each distinct chunk once, in byte order.
	counts := map[string]int64{}
	for _, c := range PreTokenize(string(corpus)) {
		counts[c]++
	}
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	words := make([]word, len(keys))
	for i, k := range keys {
		syms := make([]int32, len(k))
		for j := 0; j < len(k); j++ {
			syms[j] = int32(firstByteID + int(k[j]))
		}
		words[i] = word{syms: syms, n: counts[k]}
	}

	tr := &trainer{t: t, pairs: map[pair]int64{}, where: map[pair][]int32{}}
	for wi := range words {
		w := &words[wi]
		for j := 0; j+1 < len(w.syms); j++ {
			p := pair{w.syms[j], w.syms[j+1]}
			tr.pairs[p] += w.n
			tr.where[p] = append(tr.where[p], int32(wi))
		}
	}
	for p, n := range tr.pairs {
		tr.h.items = append(tr.h.items, entry{p: p, n: n})
	}
	tr.h.t = t
	heap.Init(&tr.h)

	stamp := make([]int, len(words))
	step := 0
	for len(t.Tokens) < vocabSize && tr.h.Len() > 0 {
		if step%64 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		e := heap.Pop(&tr.h).(entry)
		if cur := tr.pairs[e.p]; cur != e.n {
			continue // stale: a fresher entry for this pair is in the heap
		}
		if e.n < 2 {
			break
		}
		step++
		left, right := t.Tokens[e.p.a], t.Tokens[e.p.b]
		text := left + right
		id, ok := t.ids[text]
		if !ok {
			id = int32(len(t.Tokens))
			t.Tokens = append(t.Tokens, text)
			t.Types = append(t.Types, TokenNormal)
			t.ids[text] = id
		}
		t.Merges = append(t.Merges, left+" "+right)

		changed := map[pair]struct{}{}
		for _, wi := range tr.where[e.p] {
			if stamp[wi] == step {
				continue
			}
			stamp[wi] = step
			w := &words[wi]
			tr.add(w, -1, changed, 0)
			out := w.syms[:0]
			for j := 0; j < len(w.syms); j++ {
				if j+1 < len(w.syms) && w.syms[j] == e.p.a && w.syms[j+1] == e.p.b {
					out = append(out, id)
					j++
					continue
				}
				out = append(out, w.syms[j])
			}
			w.syms = out
			tr.add(w, +1, changed, int(wi))
		}
		delete(tr.where, e.p)
		// Push fresh entries in a fixed order (the heap's order does not
		// depend on it, but keep the work deterministic anyway).
		ps := make([]pair, 0, len(changed))
		for p := range changed {
			ps = append(ps, p)
		}
		sort.Slice(ps, func(i, j int) bool {
			if ps[i].a != ps[j].a {
				return ps[i].a < ps[j].a
			}
			return ps[i].b < ps[j].b
		})
		for _, p := range ps {
			if n := tr.pairs[p]; n > 0 {
				heap.Push(&tr.h, entry{p: p, n: n})
			} else {
				delete(tr.pairs, p)
			}
		}
	}
	t.index()
	return t, nil
}

type pair struct{ a, b int32 }

type word struct {
	syms []int32
	n    int64
}

type trainer struct {
	t     *Tokenizer
	pairs map[pair]int64
	where map[pair][]int32
	h     pairHeap
}

// add adds sign × the word's count to each of its pairs' counts, noting the
// pairs changed; when adding, it also records that word wi holds them.
func (tr *trainer) add(w *word, sign int64, changed map[pair]struct{}, wi int) {
	for j := 0; j+1 < len(w.syms); j++ {
		p := pair{w.syms[j], w.syms[j+1]}
		tr.pairs[p] += sign * w.n
		changed[p] = struct{}{}
		if sign > 0 {
			tr.where[p] = append(tr.where[p], int32(wi))
		}
	}
}

type entry struct {
	p pair
	n int64
}

// pairHeap orders pairs by count, highest first, then by the texts of the
// left and right tokens in byte order.
type pairHeap struct {
	items []entry
	t     *Tokenizer
}

func (h *pairHeap) Len() int { return len(h.items) }
func (h *pairHeap) Less(i, j int) bool {
	a, b := h.items[i], h.items[j]
	if a.n != b.n {
		return a.n > b.n
	}
	la, lb := h.t.Tokens[a.p.a], h.t.Tokens[b.p.a]
	if la != lb {
		return la < lb
	}
	return h.t.Tokens[a.p.b] < h.t.Tokens[b.p.b]
}
func (h *pairHeap) Swap(i, j int) { h.items[i], h.items[j] = h.items[j], h.items[i] }
func (h *pairHeap) Push(x any)    { h.items = append(h.items, x.(entry)) }
func (h *pairHeap) Pop() any {
	n := len(h.items) - 1
	e := h.items[n]
	h.items = h.items[:n]
	return e
}

// index rebuilds the lookup tables from Tokens and Merges.
func (t *Tokenizer) index() {
	t.ids = make(map[string]int32, len(t.Tokens))
	for i, s := range t.Tokens {
		if _, dup := t.ids[s]; !dup {
			t.ids[s] = int32(i)
		}
	}
	t.ranks = make(map[[2]string]int, len(t.Merges))
	for i, m := range t.Merges {
		l, r, _ := strings.Cut(m, " ")
		if _, dup := t.ranks[[2]string{l, r}]; !dup {
			t.ranks[[2]string{l, r}] = i
		}
	}
}

// ID returns the id of the token whose GGUF text is s, and whether there is
// one. For special tokens the text is as written ("<|im_end|>"); for the
// others it is the byte-level text (" the" is "Ġthe").
func (t *Tokenizer) ID(s string) (int, bool) {
	if t.ids == nil {
		t.index()
	}
	id, ok := t.ids[s]
	return int(id), ok
}

// Encode returns the token ids of text as llama.cpp encodes it without
// special-token parsing: pre-tokenized (see [PreTokenize]), then each
// chunk's bytes merged by the highest-priority merge first (leftmost on
// ties). Special-token texts in text are encoded as plain text.
func (t *Tokenizer) Encode(text string) []int {
	if t.ids == nil {
		t.index()
	}
	var out []int
	for _, c := range PreTokenize(text) {
		syms := make([]string, len(c))
		for i := 0; i < len(c); i++ {
			syms[i] = string(byteChar[c[i]])
		}
		for len(syms) > 1 {
			best, at := -1, -1
			for i := 0; i+1 < len(syms); i++ {
				if r, ok := t.ranks[[2]string{syms[i], syms[i+1]}]; ok && (best < 0 || r < best) {
					best, at = r, i
				}
			}
			if at < 0 {
				break
			}
			syms[at] += syms[at+1]
			syms = append(syms[:at+1], syms[at+2:]...)
		}
		for _, s := range syms {
			if id, ok := t.ids[s]; ok {
				out = append(out, int(id))
				continue
			}
			for _, r := range s { // a merge without a token: fall back to bytes
				out = append(out, firstByteID+int(charByte[r]))
			}
		}
	}
	return out
}

// Decode returns the text of the token ids: special tokens as their text,
// the others as the bytes their byte-level text stands for. Ids out of
// range are skipped.
func (t *Tokenizer) Decode(ids []int) string {
	var sb strings.Builder
	for _, id := range ids {
		if id < 0 || id >= len(t.Tokens) {
			continue
		}
		if t.Types[id] == TokenControl {
			sb.WriteString(t.Tokens[id])
			continue
		}
		for _, r := range t.Tokens[id] {
			sb.WriteByte(charByte[r])
		}
	}
	return sb.String()
}

// TokenBytes returns the bytes token id stands for (its text for a special
// token), or nil for an id out of range.
func (t *Tokenizer) TokenBytes(id int) []byte {
	if id < 0 || id >= len(t.Tokens) {
		return nil
	}
	return []byte(t.Decode([]int{id}))
}

// TokenizerFrom returns the tokenizer stored in a GGUF header
// (tokenizer.ggml.tokens, token_type and merges), so that a test can count
// tokens as the engine will. It returns an error wrapping [ErrFormat] when
// the keys are missing or of the wrong types.
func TokenizerFrom(h *Header) (*Tokenizer, error) {
	strs := func(k string) ([]string, error) {
		v, ok := h.Get(k)
		arr, ok2 := v.([]any)
		if !ok || !ok2 {
			return nil, fmt.Errorf("%w: %s missing or not an array", ErrFormat, k)
		}
		out := make([]string, len(arr))
		for i, x := range arr {
			s, ok := x.(string)
			if !ok {
				return nil, fmt.Errorf("%w: %s[%d] is %T", ErrFormat, k, i, x)
			}
			out[i] = s
		}
		return out, nil
	}
	t := &Tokenizer{}
	var err error
	if t.Tokens, err = strs("tokenizer.ggml.tokens"); err != nil {
		return nil, err
	}
	if t.Merges, err = strs("tokenizer.ggml.merges"); err != nil {
		return nil, err
	}
	v, _ := h.Get("tokenizer.ggml.token_type")
	arr, _ := v.([]any)
	if len(arr) != len(t.Tokens) {
		return nil, fmt.Errorf("%w: %d token types for %d tokens", ErrFormat, len(arr), len(t.Tokens))
	}
	for i, x := range arr {
		n, ok := x.(int32)
		if !ok {
			return nil, fmt.Errorf("%w: token_type[%d] is %T", ErrFormat, i, x)
		}
		t.Types = append(t.Types, n)
	}
	for _, s := range t.Tokens {
		for _, r := range s {
			if _, ok := charByte[r]; !ok && !strings.HasPrefix(s, "<|") {
				return nil, fmt.Errorf("%w: token %q is not byte-level text", ErrFormat, s)
			}
		}
	}
	t.index()
	return t, nil
}
