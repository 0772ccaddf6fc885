package gguf

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"
)

// smallCorpus is a little text that is cheap to train a tokenizer on.
var smallCorpus = []byte(strings.Repeat(`func (t *Tokenizer) Encode(text string) []int { return nil } // "quoted", {obj}, [arr]
The heartbeat loop builds a prompt from an agent's identity and asks a model for JSON.
`, 20))

// tinyTokenizer is trained once for the tests that write files.
var tinyTokenizer = sync.OnceValues(func() (*Tokenizer, error) {
	return Train(context.Background(), smallCorpus, Tiny().Vocab)
})

func tinyConfig(t *testing.T) Config {
	t.Helper()
	tok, err := tinyTokenizer()
	if err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig()
	cfg.Spec, cfg.Tokenizer = Tiny(), tok
	return cfg
}

func write(t *testing.T, cfg Config) ([]byte, Stats) {
	t.Helper()
	var buf bytes.Buffer
	st, err := Write(context.Background(), &buf, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if st.Bytes != int64(buf.Len()) {
		t.Fatalf("Stats.Bytes = %d, wrote %d", st.Bytes, buf.Len())
	}
	return buf.Bytes(), st
}

func TestWriteReadRoundTrip(t *testing.T) {
	cfg := tinyConfig(t)
	data, st := write(t, cfg)
	h, err := Read(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	s := cfg.Spec
	if h.Version != 3 || string(data[:4]) != "GGUF" {
		t.Errorf("version %d, magic %q", h.Version, data[:4])
	}
	wantKV := map[string]any{
		"general.architecture":                   "llama",
		"general.alignment":                      uint32(32),
		"general.file_type":                      uint32(7),
		"llama.context_length":                   uint32(s.Context),
		"llama.embedding_length":                 uint32(s.Embedding),
		"llama.block_count":                      uint32(s.Blocks),
		"llama.feed_forward_length":              uint32(s.FeedForward),
		"llama.attention.head_count":             uint32(s.Heads),
		"llama.attention.head_count_kv":          uint32(s.HeadsKV),
		"llama.attention.layer_norm_rms_epsilon": float32(1e-5),
		"llama.rope.freq_base":                   float32(100000),
		"llama.rope.dimension_count":             uint32(s.Embedding / s.Heads),
		"tokenizer.ggml.model":                   "gpt2",
		"tokenizer.ggml.pre":                     "smollm",
		"tokenizer.ggml.bos_token_id":            uint32(1),
		"tokenizer.ggml.eos_token_id":            uint32(2),
		"tokenizer.ggml.padding_token_id":        uint32(2),
		"tokenizer.ggml.add_bos_token":           false,
		"tokenizer.chat_template":                ChatTemplate,
		InputsKey:                                st.Inputs,
	}
	for k, want := range wantKV {
		if got, ok := h.Get(k); !ok || got != want {
			t.Errorf("%s = %#v (present %v), want %#v", k, got, ok, want)
		}
	}
	tok, err := TokenizerFrom(h)
	if err != nil {
		t.Fatal(err)
	}
	if len(tok.Tokens) != st.Vocab || tok.Tokens[0] != EndOfText || tok.Tokens[1] != IMStart || tok.Tokens[2] != IMEnd {
		t.Errorf("tokens: %d, first %q", len(tok.Tokens), tok.Tokens[:3])
	}
	if len(tok.Merges) != len(cfg.Tokenizer.Merges) || tok.Types[2] != TokenControl || tok.Types[100] != TokenNormal {
		t.Errorf("merges %d, types %v", len(tok.Merges), tok.Types[:4])
	}

	// Tensor table: 9 per block + 3 tensors, aligned offsets, data to
	// the end of the file.
	if len(h.Tensors) != 3+9*s.Blocks || st.Tensors != len(h.Tensors) {
		t.Fatalf("%d tensors (stats %d)", len(h.Tensors), st.Tensors)
	}
	byName := map[string]TensorInfo{}
	var params int64
	end := uint64(0)
	for _, ti := range h.Tensors {
		byName[ti.Name] = ti
		if ti.Offset%Alignment != 0 || ti.Offset < end {
			t.Errorf("%s at offset %d (previous end %d)", ti.Name, ti.Offset, end)
		}
		n := int64(1)
		for _, d := range ti.Dims {
			n *= int64(d)
		}
		params += n
		size := uint64(n) * 4
		if ti.Type == TypeQ8_0 {
			size = uint64(n) / 32 * 34
		}
		end = ti.Offset + size
	}
	if params != st.Params {
		t.Errorf("params %d, stats %d", params, st.Params)
	}
	if h.DataOffset%Alignment != 0 || h.DataOffset+int64(end) > int64(len(data)) || int64(len(data))-(h.DataOffset+int64(end)) >= Alignment {
		t.Errorf("data at %d, %d bytes of tensors, file %d bytes", h.DataOffset, end, len(data))
	}
	E, V, kv := uint64(s.Embedding), uint64(st.Vocab), uint64(s.Embedding/s.Heads*s.HeadsKV)
	shapes := map[string][]uint64{
		"token_embd.weight":        {E, V},
		"output.weight":            {E, V},
		"output_norm.weight":       {E},
		"blk.1.attn_k.weight":      {E, kv},
		"blk.1.ffn_down.weight":    {uint64(s.FeedForward), E},
		"blk.0.ffn_norm.weight":    {E},
		"blk.0.attn_output.weight": {E, E},
	}
	for name, dims := range shapes {
		if got := byName[name].Dims; !slices.Equal(got, dims) {
			t.Errorf("%s dims %v, want %v", name, got, dims)
		}
	}
	if byName["output_norm.weight"].Type != TypeF32 || byName["blk.0.attn_q.weight"].Type != TypeQ8_0 {
		t.Error("norms must be F32 and matrices Q8_0")
	}

	// The data: every token embedding holds 1 in the bias channel, the
	// attention output never writes it, <|im_end|>'s output row carries the
	// stop bias in it, and the norms are F32 ones.
	tensorData := func(name string) []byte {
		ti := byName[name]
		return data[h.DataOffset+int64(ti.Offset):]
	}
	rowBytes := int(E) / 32 * 34
	emb := tensorData("token_embd.weight")
	for _, tok := range []int{0, 5, int(V) - 1} {
		if v := dequant(emb[tok*rowBytes:], 0); math.Abs(float64(v)-1) > 0.01 {
			t.Errorf("token %d embedding[0] = %g, want 1", tok, v)
		}
	}
	if v := dequant(tensorData("output.weight")[EOSID*rowBytes:], 0); math.Abs(float64(v)-cfg.Shaping.StopBias) > 0.05 {
		t.Errorf("<|im_end|> output[0] = %g, want %g", v, cfg.Shaping.StopBias)
	}
	if d := tensorData("blk.0.attn_output.weight")[:34]; !bytes.Equal(d, make([]byte, 34)) {
		t.Errorf("attn_output row 0 = %v, want zeros", d)
	}
	if v := math.Float32frombits(binary.LittleEndian.Uint32(tensorData("blk.0.attn_norm.weight")[4:])); v != 1 {
		t.Errorf("attn_norm[1] = %g, want 1", v)
	}
}

// dequant returns element j of the Q8_0 row starting at row.
func dequant(row []byte, j int) float32 {
	blk := row[j/32*34:]
	return Float16ToFloat32(binary.LittleEndian.Uint16(blk)) * float32(int8(blk[2+j%32]))
}

func TestWriteDeterministic(t *testing.T) {
	cfg := tinyConfig(t)
	a, sa := write(t, cfg)
	cfg.Tokenizer = nil // train again from the corpus: same vocabulary
	cfg.Corpus = smallCorpus
	b, sb := write(t, cfg)
	if !bytes.Equal(a, b) || sa.Inputs != sb.Inputs {
		t.Error("two writes of the same config differ")
	}
	cfg.Seed++
	c, sc := write(t, cfg)
	if bytes.Equal(a, c) || sa.Inputs == sc.Inputs {
		t.Error("another seed gives the same file")
	}
	if len(a) != len(c) {
		t.Errorf("sizes %d and %d differ for the same shape", len(a), len(c))
	}
}

func TestWriteErrors(t *testing.T) {
	bad := []func(*Spec){
		func(s *Spec) { s.Embedding = 48 },
		func(s *Spec) { s.FeedForward = 100 },
		func(s *Spec) { s.Heads = 3 },
		func(s *Spec) { s.HeadsKV = 3 },
		func(s *Spec) { s.Blocks = 0 },
		func(s *Spec) { s.Vocab = 10 },
		func(s *Spec) { s.RopeBase = 0 },
	}
	for i, f := range bad {
		cfg := tinyConfig(t)
		f(&cfg.Spec)
		if _, err := Write(context.Background(), &bytes.Buffer{}, cfg); !errors.Is(err, ErrSpec) {
			t.Errorf("case %d: error %v, want ErrSpec", i, err)
		}
	}
	if err := SmolLM2().Validate(); err != nil {
		t.Errorf("SmolLM2: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Write(ctx, &bytes.Buffer{}, tinyConfig(t)); !errors.Is(err, context.Canceled) {
		t.Errorf("canceled: %v", err)
	}
}

func TestReadErrors(t *testing.T) {
	data, _ := write(t, tinyConfig(t))
	for name, in := range map[string][]byte{
		"empty":     nil,
		"magic":     []byte("GGML\x03\x00\x00\x00"),
		"version":   append([]byte("GGUF\x09\x00\x00\x00"), make([]byte, 16)...),
		"truncated": data[:1000],
	} {
		if _, err := Read(bytes.NewReader(in)); !errors.Is(err, ErrFormat) {
			t.Errorf("%s: error %v, want ErrFormat", name, err)
		}
	}
}

// TestSmolLM2Size checks the default shape's size from its tensor table
// without writing the weights.
func TestSmolLM2Size(t *testing.T) {
	tok := &Tokenizer{Tokens: make([]string, 4096), Types: make([]int32, 4096)}
	var params, size int64
	for _, ts := range layout(SmolLM2(), 4096, DefaultShaping(), tok) {
		params += int64(ts.rows()) * int64(ts.dims[0])
		size += ts.size()
	}
	if params != 110_922_048 {
		t.Errorf("params = %d, want 110922048", params)
	}
	if size < 115e6 || size > 120e6 {
		t.Errorf("tensor data = %d bytes, want about 118 MB", size)
	}
}
