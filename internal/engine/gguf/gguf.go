package gguf

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"strings"
)

// Magic is the first four bytes of every GGUF file.
const Magic = "GGUF"

// Version is the GGUF format version written.
const Version = 3

// Alignment is the alignment of the tensor data section and of each
// tensor's data within it, in bytes (general.alignment).
const Alignment = 32

// GGML tensor types written ([TensorInfo].Type).
const (
	TypeF32  uint32 = 0
	TypeQ8_0 uint32 = 8
)

// InputsKey is the metadata key holding the hex SHA-256 of everything the
// file is generated from (generator version, spec, seed, shaping,
// tokenizer); two files with the same value have the same bytes.
const InputsKey = "existence.generator.inputs"

// generatorVersion changes whenever the same inputs would give other bytes.
const generatorVersion = "5"

// ChatTemplate is the Jinja chat template written as
// tokenizer.chat_template: ChatML as SmolLM2 writes it, without its default
// system message. llama.cpp and node-llama-cpp recognise it as ChatML.
const ChatTemplate = "{% for message in messages %}" +
	"{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}" +
	"{% endfor %}" +
	"{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"

// Spec is a llama-architecture model's shape. Sizes are counts (tokens,
// vector elements, layers, heads).
type Spec struct {
	// Name is written as general.name.
	Name string
	// Vocab is the vocabulary size asked of the tokenizer trainer, special
	// and byte tokens included (at least [MinVocab]); a corpus with too
	// few distinct pairs gives a smaller one, and the file has the
	// tokenizer's actual size.
	Vocab int
	// Context is the training context length (llama.context_length), in
	// tokens.
	Context int
	// Embedding is the hidden size (llama.embedding_length), a multiple of
	// 32 and of Heads.
	Embedding int
	// Blocks is the number of transformer layers (llama.block_count).
	Blocks int
	// FeedForward is the feed-forward hidden size
	// (llama.feed_forward_length), a multiple of 32.
	FeedForward int
	// Heads and HeadsKV are the query and key/value attention head counts
	// (grouped-query attention: Heads is a multiple of HeadsKV).
	Heads, HeadsKV int
	// RMSEpsilon is the RMS norm's epsilon.
	RMSEpsilon float32
	// RopeBase is the rotary embedding's frequency base (theta).
	RopeBase float32
}

// SmolLM2 returns SmolLM2-135M's shape (hidden 576, 30 layers, 9 query and 3
// key/value heads, feed-forward 1536, RMS epsilon 1e-5, rope theta 100000,
// 8192-token context) with a 4096-token vocabulary instead of its 49152,
// which keeps the file near 118 MB at Q8_0.
func SmolLM2() Spec {
	return Spec{
		Name:        "existence-random-smollm2-135m",
		Vocab:       4096,
		Context:     8192,
		Embedding:   576,
		Blocks:      30,
		FeedForward: 1536,
		Heads:       9,
		HeadsKV:     3,
		RMSEpsilon:  1e-5,
		RopeBase:    100000,
	}
}

// Tiny returns a small shape for fast tests: hidden 64, 2 layers, 4 query
// and 2 key/value heads, feed-forward 128, 512-token vocabulary and
// context.
func Tiny() Spec {
	return Spec{
		Name:        "existence-random-tiny",
		Vocab:       512,
		Context:     512,
		Embedding:   64,
		Blocks:      2,
		FeedForward: 128,
		Heads:       4,
		HeadsKV:     2,
		RMSEpsilon:  1e-5,
		RopeBase:    100000,
	}
}

// ErrSpec is returned for a shape llama.cpp can't load or Q8_0 can't hold.
var ErrSpec = errors.New("gguf: invalid spec")

// Validate returns an error wrapping [ErrSpec] when s is not a loadable
// shape: sizes must be positive, Embedding and FeedForward multiples of 32,
// Embedding a multiple of Heads with an even head size, Heads a multiple of
// HeadsKV, and Vocab at least [MinVocab].
func (s Spec) Validate() error {
	switch {
	case s.Vocab < MinVocab:
		return fmt.Errorf("%w: vocab %d below %d", ErrSpec, s.Vocab, MinVocab)
	case s.Context <= 0 || s.Embedding <= 0 || s.Blocks <= 0 || s.FeedForward <= 0 || s.Heads <= 0 || s.HeadsKV <= 0:
		return fmt.Errorf("%w: sizes must be positive: %+v", ErrSpec, s)
	case s.Embedding%BlockSize != 0 || s.FeedForward%BlockSize != 0:
		return fmt.Errorf("%w: embedding %d and feed-forward %d must be multiples of 32", ErrSpec, s.Embedding, s.FeedForward)
	case s.Embedding%s.Heads != 0 || (s.Embedding/s.Heads)%2 != 0:
		return fmt.Errorf("%w: embedding %d must be an even-sized multiple of %d heads", ErrSpec, s.Embedding, s.Heads)
	case s.Heads%s.HeadsKV != 0:
		return fmt.Errorf("%w: %d heads not a multiple of %d key/value heads", ErrSpec, s.Heads, s.HeadsKV)
	case !(s.RMSEpsilon > 0) || !(s.RopeBase > 0):
		return fmt.Errorf("%w: RMS epsilon and rope base must be positive", ErrSpec)
	}
	return nil
}

// Shaping sets the scale of the random weights and the few deliberate
// biases in them. All weights are drawn from normal distributions; the
// biases use one channel of the hidden state (element 0) that every token
// embedding sets to 1 and that no layer writes to, so that the final norm
// sees a constant there and each token's output-embedding element 0 acts as
// a fixed logit bias for it.
type Shaping struct {
	// LogitStd is the standard deviation of the random part of the
	// output logits, in nats (natural-log units).
	LogitStd float64
	// LayerStd is the root mean square each attention and feed-forward
	// block adds to the residual stream, relative to the embeddings' 1.
	LayerStd float64
	// CloseBias is the logit added to every token whose text starts with
	// '"' and holds no ',': inside a JSON string under a grammar, those
	// tokens close the string (the grammar masks the ones whose rest does
	// not fit), and the closing quote is otherwise one choice among
	// thousands. It makes strings end after a few tokens.
	CloseBias float64
	// CommaBias is the logit added to every token holding ',' (negative:
	// a penalty): under a JSON grammar a comma is the move that adds
	// another property or array item, where '}' or ']' would end the
	// object or array.
	CommaBias float64
	// OpenerChannel is the bias channel's value in the embeddings of the
	// tokens that end by opening a JSON string value (their text ends with
	// `:"` or `["`, as `":"` does); every other token has 1. At -1 every
	// bias above is reversed for the one token that follows, so a string
	// is not closed as soon as it opens (with CloseBias at 7 and 1 here,
	// most string values came out empty, and a reply whose content and
	// reasoning are both blank fails validation).
	OpenerChannel float64
	// StopBias is the logit added to <|im_end|>, so that replies without a
	// grammar end after about 15 tokens (at temperature 0.8; greedy too).
	StopBias float64
}

// DefaultShaping returns the shaping [DefaultConfig] uses; see the package
// documentation for the figures behind it.
func DefaultShaping() Shaping {
	return Shaping{LogitStd: 1.5, LayerStd: 0.2, CloseBias: 5.5, CommaBias: -3, StopBias: 6.5, OpenerChannel: -1}
}

// Config is what [Write] generates a model file from.
type Config struct {
	// Spec is the model's shape.
	Spec Spec
	// Seed seeds every random weight (math/rand/v2's PCG, one stream per
	// tensor).
	Seed uint64
	// Shaping scales the weights.
	Shaping Shaping
	// Tokenizer is the vocabulary; when nil, Write trains one of
	// Spec.Vocab tokens on Corpus.
	Tokenizer *Tokenizer
	// Corpus is the training text for the tokenizer (see [ReadRepo]).
	Corpus []byte
}

// DefaultConfig returns the configuration for the default model: the
// [SmolLM2] shape, seed 1 and [DefaultShaping]; the caller supplies the
// Corpus (or a Tokenizer).
func DefaultConfig() Config {
	return Config{Spec: SmolLM2(), Seed: 1, Shaping: DefaultShaping()}
}

// Stats describes a written file.
type Stats struct {
	// Bytes is the file size in bytes.
	Bytes int64
	// Params is the number of weights (tensor elements).
	Params int64
	// Tensors is the number of tensors.
	Tensors int
	// Vocab is the vocabulary size.
	Vocab int
	// Inputs is the hex SHA-256 stored under [InputsKey].
	Inputs string
	// Tokenizer is the vocabulary written.
	Tokenizer *Tokenizer
}

// tensor is one tensor to write: its name, ggml dimensions (ne[0] first,
// the row length) and how to fill row r.
type tensor struct {
	name string
	dims []uint64
	typ  uint32
	fill func(rng *rand.Rand, row int, dst []float32)
}

func (t tensor) rows() int {
	n := 1
	for _, d := range t.dims[1:] {
		n *= int(d)
	}
	return n
}

func (t tensor) size() int64 {
	row := int64(t.dims[0]) * 4
	if t.typ == TypeQ8_0 {
		row = int64(t.dims[0]) / BlockSize * Q8BlockBytes
	}
	return row * int64(t.rows())
}

// Write generates a llama-architecture GGUF v3 model file into w: metadata
// (architecture, shape, tokenizer, ChatML chat template), then Q8_0 weight
// matrices and F32 norm weights with seeded random values. The same Config
// gives the same bytes. It returns an error wrapping [ErrSpec] for a bad
// shape, the tokenizer trainer's errors, w's write errors, and the
// context's error if ctx ends.
func Write(ctx context.Context, w io.Writer, cfg Config) (Stats, error) {
	s := cfg.Spec
	if err := s.Validate(); err != nil {
		return Stats{}, err
	}
	tok := cfg.Tokenizer
	if tok == nil {
		var err error
		if tok, err = Train(ctx, cfg.Corpus, s.Vocab); err != nil {
			return Stats{}, err
		}
	}
	if len(tok.Tokens) < MinVocab || len(tok.Types) != len(tok.Tokens) {
		return Stats{}, fmt.Errorf("%w: tokenizer has %d tokens and %d types", ErrSpec, len(tok.Tokens), len(tok.Types))
	}
	tensors := layout(s, len(tok.Tokens), cfg.Shaping, tok)
	inputs := inputsHash(cfg, tok)

	var params int64
	for _, t := range tensors {
		params += int64(t.rows()) * int64(t.dims[0])
	}

	var hdr bytes.Buffer
	hdr.WriteString(Magic)
	le := binary.LittleEndian
	hdr.Write(le.AppendUint32(nil, Version))
	hdr.Write(le.AppendUint64(nil, uint64(len(tensors))))
	kvs := metadata(s, tok, inputs)
	hdr.Write(le.AppendUint64(nil, uint64(len(kvs))))
	for _, kv := range kvs {
		appendString(&hdr, kv.Key)
		if err := appendValue(&hdr, kv.Value); err != nil {
			return Stats{}, fmt.Errorf("gguf: key %s: %w", kv.Key, err)
		}
	}
	var off uint64
	for _, t := range tensors {
		appendString(&hdr, t.name)
		hdr.Write(le.AppendUint32(nil, uint32(len(t.dims))))
		for _, d := range t.dims {
			hdr.Write(le.AppendUint64(nil, d))
		}
		hdr.Write(le.AppendUint32(nil, t.typ))
		hdr.Write(le.AppendUint64(nil, off))
		off = align(off + uint64(t.size()))
	}
	hdr.Write(make([]byte, align(uint64(hdr.Len()))-uint64(hdr.Len())))

	bw := bufio.NewWriterSize(w, 1<<20)
	n := int64(hdr.Len())
	if _, err := bw.Write(hdr.Bytes()); err != nil {
		return Stats{}, err
	}
	var row []float32
	var buf []byte
	for ti, t := range tensors {
		if err := ctx.Err(); err != nil {
			return Stats{}, err
		}
		rng := rand.New(rand.NewPCG(cfg.Seed, uint64(ti)))
		if cap(row) < int(t.dims[0]) {
			row = make([]float32, t.dims[0])
		}
		row = row[:t.dims[0]]
		for r := 0; r < t.rows(); r++ {
			t.fill(rng, r, row)
			buf = buf[:0]
			if t.typ == TypeQ8_0 {
				buf = AppendQ8_0(buf, row)
			} else {
				for _, v := range row {
					buf = le.AppendUint32(buf, math.Float32bits(v))
				}
			}
			if _, err := bw.Write(buf); err != nil {
				return Stats{}, err
			}
		}
		size := t.size()
		pad := int64(align(uint64(size))) - size
		if _, err := bw.Write(make([]byte, pad)); err != nil {
			return Stats{}, err
		}
		n += size + pad
	}
	if err := bw.Flush(); err != nil {
		return Stats{}, err
	}
	return Stats{Bytes: n, Params: params, Tensors: len(tensors), Vocab: len(tok.Tokens), Inputs: inputs, Tokenizer: tok}, nil
}

func align(n uint64) uint64 { return (n + Alignment - 1) / Alignment * Alignment }

// layout lists the tensors of a llama model of shape s, with how to fill
// each (see [Shaping]).
func layout(s Spec, vocab int, sh Shaping, tok *Tokenizer) []tensor {
	E, F := uint64(s.Embedding), uint64(s.FeedForward)
	kv := uint64(s.Embedding / s.Heads * s.HeadsKV)
	V := uint64(vocab)

	normal := func(std float64, zeroRow0 bool) func(*rand.Rand, int, []float32) {
		return func(rng *rand.Rand, r int, dst []float32) {
			for i := range dst {
				dst[i] = float32(rng.NormFloat64() * std)
			}
			if zeroRow0 && r == 0 {
				clear(dst) // no layer writes the bias channel
			}
		}
	}
	ones := func(first float32) func(*rand.Rand, int, []float32) {
		return func(_ *rand.Rand, _ int, dst []float32) {
			for i := range dst {
				dst[i] = 1
			}
			dst[0] = first
		}
	}
	inStd := 1 / math.Sqrt(float64(E))
	// silu(g)·u with g, u standard normal has a root mean square near 0.6.
	downStd := sh.LayerStd / (0.6 * math.Sqrt(float64(F)))
	// The residual stream's root mean square at the end, estimated, so
	// that the final norm leaves about 1 in the bias channel.
	rms := math.Sqrt(1 + 2*float64(s.Blocks)*sh.LayerStd*sh.LayerStd)

	bias := make([]float32, vocab)
	for id := range bias {
		if id == EOSID {
			bias[id] = float32(sh.StopBias)
			continue
		}
		if tok.Types[id] == TokenControl {
			continue
		}
		switch b := tok.TokenBytes(id); {
		case bytes.IndexByte(b, ',') >= 0:
			bias[id] = float32(sh.CommaBias)
		case len(b) > 0 && b[0] == '"':
			bias[id] = float32(sh.CloseBias)
		}
	}
	outStd := sh.LogitStd / math.Sqrt(float64(E-1))

	channel := make([]float32, vocab)
	for id := range channel {
		channel[id] = 1
		if b := tok.TokenBytes(id); tok.Types[id] != TokenControl && (bytes.HasSuffix(b, []byte(`:"`)) || bytes.HasSuffix(b, []byte(`["`))) {
			channel[id] = float32(sh.OpenerChannel)
		}
	}

	ts := []tensor{{
		name: "token_embd.weight", dims: []uint64{E, V}, typ: TypeQ8_0,
		fill: func(rng *rand.Rand, r int, dst []float32) {
			for i := range dst {
				dst[i] = float32(rng.NormFloat64())
			}
			dst[0] = channel[r] // the bias channel
		},
	}}
	for b := 0; b < s.Blocks; b++ {
		p := fmt.Sprintf("blk.%d.", b)
		ts = append(ts,
			tensor{name: p + "attn_norm.weight", dims: []uint64{E}, typ: TypeF32, fill: ones(1)},
			tensor{name: p + "attn_q.weight", dims: []uint64{E, E}, typ: TypeQ8_0, fill: normal(inStd, false)},
			tensor{name: p + "attn_k.weight", dims: []uint64{E, kv}, typ: TypeQ8_0, fill: normal(inStd, false)},
			tensor{name: p + "attn_v.weight", dims: []uint64{E, kv}, typ: TypeQ8_0, fill: normal(inStd, false)},
			tensor{name: p + "attn_output.weight", dims: []uint64{E, E}, typ: TypeQ8_0, fill: normal(sh.LayerStd*inStd, true)},
			tensor{name: p + "ffn_norm.weight", dims: []uint64{E}, typ: TypeF32, fill: ones(1)},
			tensor{name: p + "ffn_gate.weight", dims: []uint64{E, F}, typ: TypeQ8_0, fill: normal(inStd, false)},
			tensor{name: p + "ffn_up.weight", dims: []uint64{E, F}, typ: TypeQ8_0, fill: normal(inStd, false)},
			tensor{name: p + "ffn_down.weight", dims: []uint64{F, E}, typ: TypeQ8_0, fill: normal(downStd, true)},
		)
	}
	ts = append(ts,
		tensor{name: "output_norm.weight", dims: []uint64{E}, typ: TypeF32, fill: ones(float32(rms))},
		tensor{name: "output.weight", dims: []uint64{E, V}, typ: TypeQ8_0,
			fill: func(rng *rand.Rand, r int, dst []float32) {
				for i := range dst {
					dst[i] = float32(rng.NormFloat64() * outStd)
				}
				dst[0] = bias[r]
			}},
	)
	return ts
}

// KV is one metadata key/value pair. Value is one of uint32, int32, uint64,
// float32, bool, string, []string or []int32.
type KV struct {
	Key   string
	Value any
}

func metadata(s Spec, tok *Tokenizer, inputs string) []KV {
	return []KV{
		{"general.architecture", "llama"},
		{"general.name", s.Name},
		{"general.alignment", uint32(Alignment)},
		{"general.file_type", uint32(7)}, // LLAMA_FTYPE_MOSTLY_Q8_0
		{"general.quantization_version", uint32(2)},
		{"llama.vocab_size", uint32(len(tok.Tokens))},
		{"llama.context_length", uint32(s.Context)},
		{"llama.embedding_length", uint32(s.Embedding)},
		{"llama.block_count", uint32(s.Blocks)},
		{"llama.feed_forward_length", uint32(s.FeedForward)},
		{"llama.attention.head_count", uint32(s.Heads)},
		{"llama.attention.head_count_kv", uint32(s.HeadsKV)},
		{"llama.attention.layer_norm_rms_epsilon", s.RMSEpsilon},
		{"llama.rope.freq_base", s.RopeBase},
		{"llama.rope.dimension_count", uint32(s.Embedding / s.Heads)},
		{"tokenizer.ggml.model", "gpt2"},
		{"tokenizer.ggml.pre", "smollm"},
		{"tokenizer.ggml.tokens", tok.Tokens},
		{"tokenizer.ggml.token_type", tok.Types},
		{"tokenizer.ggml.merges", tok.Merges},
		{"tokenizer.ggml.bos_token_id", uint32(BOSID)},
		{"tokenizer.ggml.eos_token_id", uint32(EOSID)},
		{"tokenizer.ggml.unknown_token_id", uint32(UnknownID)},
		{"tokenizer.ggml.padding_token_id", uint32(PaddingID)},
		{"tokenizer.ggml.add_bos_token", false},
		{"tokenizer.chat_template", ChatTemplate},
		{InputsKey, inputs},
	}
}

// GGUF metadata value types.
const (
	typeUint32  uint32 = 4
	typeInt32   uint32 = 5
	typeFloat32 uint32 = 6
	typeBool    uint32 = 7
	typeString  uint32 = 8
	typeArray   uint32 = 9
	typeUint64  uint32 = 10
)

func appendString(b *bytes.Buffer, s string) {
	b.Write(binary.LittleEndian.AppendUint64(nil, uint64(len(s))))
	b.WriteString(s)
}

func appendValue(b *bytes.Buffer, v any) error {
	le := binary.LittleEndian
	switch v := v.(type) {
	case uint32:
		b.Write(le.AppendUint32(le.AppendUint32(nil, typeUint32), v))
	case int32:
		b.Write(le.AppendUint32(le.AppendUint32(nil, typeInt32), uint32(v)))
	case uint64:
		b.Write(le.AppendUint64(le.AppendUint32(nil, typeUint64), v))
	case float32:
		b.Write(le.AppendUint32(le.AppendUint32(nil, typeFloat32), math.Float32bits(v)))
	case bool:
		c := byte(0)
		if v {
			c = 1
		}
		b.Write(append(le.AppendUint32(nil, typeBool), c))
	case string:
		b.Write(le.AppendUint32(nil, typeString))
		appendString(b, v)
	case []string:
		b.Write(le.AppendUint64(le.AppendUint32(le.AppendUint32(nil, typeArray), typeString), uint64(len(v))))
		for _, s := range v {
			appendString(b, s)
		}
	case []int32:
		b.Write(le.AppendUint64(le.AppendUint32(le.AppendUint32(nil, typeArray), typeInt32), uint64(len(v))))
		for _, x := range v {
			b.Write(le.AppendUint32(nil, uint32(x)))
		}
	default:
		return fmt.Errorf("unsupported metadata type %T", v)
	}
	return nil
}

// Inputs returns the hex SHA-256 of everything the bytes [Write] writes
// for c depend on, as stored under [InputsKey]; c.Tokenizer must be set
// (it returns "" otherwise).
func (c Config) Inputs() string {
	if c.Tokenizer == nil {
		return ""
	}
	return inputsHash(c, c.Tokenizer)
}

// inputsHash is the SHA-256 of everything the bytes depend on.
func inputsHash(cfg Config, tok *Tokenizer) string {
	h := sha256.New()
	fmt.Fprintf(h, "generator %s\nspec %+v\nseed %d\nshaping %+v\n", generatorVersion, cfg.Spec, cfg.Seed, cfg.Shaping)
	fmt.Fprintf(h, "tokens %d\n%s\n", len(tok.Tokens), strings.Join(tok.Tokens, "\x00"))
	fmt.Fprintf(h, "types %v\nmerges %d\n%s\n", tok.Types, len(tok.Merges), strings.Join(tok.Merges, "\x00"))
	return hex.EncodeToString(h.Sum(nil))
}
