package gguf

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"sync"
	"testing"
)

func TestPreTokenize(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"Hello world", []string{"Hello", " world"}},
		{"it's we're", []string{"it", "'s", " we", "'re"}},
		{"x := 123", []string{"x", " :=", " ", "1", "2", "3"}},
		{"a  b", []string{"a", " ", " b"}},
		{"a\n\tb", []string{"a", "\n", "\t", "b"}},
		{"a\n\n\tb\n", []string{"a", "\n\n", "\t", "b", "\n"}},
		{"f(x) {", []string{"f", "(", "x", ")", " {"}},
		{"héllo 日本語", []string{"héllo", " 日本語"}},
		{"'x", []string{"'", "x"}},
		{"\xff\xfeab", []string{"\xff\xfe", "ab"}},
	}
	for _, tt := range tests {
		got := PreTokenize(tt.in)
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("PreTokenize(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if strings.Join(got, "") != tt.in {
			t.Errorf("PreTokenize(%q) chunks do not concatenate back", tt.in)
		}
	}
}

// TestTrainToy checks the merges on a corpus small enough to follow by
// hand: "ab" occurs 4 times, then "abc" 3 times; "xy" 2 times.
func TestTrainToy(t *testing.T) {
	tok, err := Train(context.Background(), []byte("abc abc abc ab xy xy"), MinVocab+3)
	if err != nil {
		t.Fatal(err)
	}
	// Chunks: "abc", " abc" ×2, " ab", " xy" ×2. Pairs: "a b" 4, "b c" 3,
	// "Ġ a" 3, "Ġ x" 2, "x y" 2: merge "a b". Then "ab c" 3 ties "Ġ ab" 3
	// and wins on text order ("ab" < "Ġ"). Then "Ġ abc", "Ġ x" and "x y"
	// tie at 2 and "x y" wins ("x" < "Ġ").
	want := []string{"a b", "ab c", "x y"}
	if !reflect.DeepEqual(tok.Merges, want) {
		t.Errorf("merges = %q, want %q", tok.Merges, want)
	}
	if got := tok.Tokens[MinVocab:]; !reflect.DeepEqual(got, []string{"ab", "abc", "xy"}) {
		t.Errorf("new tokens = %q", got)
	}
	if got := tok.Encode("abc abc"); !reflect.DeepEqual(got, []int{MinVocab + 1, firstByteID + ' ', MinVocab + 1}) {
		t.Errorf("Encode = %v", got)
	}
	if _, err := Train(context.Background(), nil, 100); !errors.Is(err, ErrVocabSize) {
		t.Errorf("Train(100) error = %v, want ErrVocabSize", err)
	}
}

func TestTrainStopsWithoutRepeatedPairs(t *testing.T) {
	tok, err := Train(context.Background(), []byte("ab"), 1000)
	if err != nil {
		t.Fatal(err)
	}
	if len(tok.Tokens) != MinVocab || len(tok.Merges) != 0 {
		t.Errorf("got %d tokens, %d merges; want the base vocabulary only", len(tok.Tokens), len(tok.Merges))
	}
}

func TestTrainCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Train(ctx, []byte(strings.Repeat("abcd efgh ", 100)), 600); !errors.Is(err, context.Canceled) {
		t.Errorf("error = %v, want context.Canceled", err)
	}
}

// repoCorpus is the repository's own text, read once.
var repoCorpus = sync.OnceValues(func() ([]byte, error) { return ReadRepo("../../../..") })

// TestTokenizerRepoLossless trains on the first megabyte of the
// repository's .go and .md files and checks that other repository text
// encodes and decodes back byte for byte, that training is deterministic,
// and that the vocabulary compresses the text.
func TestTokenizerRepoLossless(t *testing.T) {
	corpus, err := repoCorpus()
	if err != nil {
		t.Fatal(err)
	}
	if len(corpus) < 100_000 {
		t.Fatalf("repository corpus is only %d bytes", len(corpus))
	}
	train := corpus[:min(len(corpus), 1<<20)]
	tok, err := Train(context.Background(), train, 1024)
	if err != nil {
		t.Fatal(err)
	}
	again, err := Train(context.Background(), train, 1024)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(tok.Tokens, again.Tokens) || !reflect.DeepEqual(tok.Merges, again.Merges) {
		t.Error("two trainings on the same corpus differ")
	}
	if len(tok.Tokens) != 1024 {
		t.Errorf("vocabulary = %d tokens, want 1024", len(tok.Tokens))
	}
	text := string(corpus[len(corpus)-200_000:]) + "héllo 日本語 \xff\xfe ²³ " + IMEnd
	ids := tok.Encode(text)
	if got := tok.Decode(ids); got != text {
		i := 0
		for i < len(got) && i < len(text) && got[i] == text[i] {
			i++
		}
		t.Fatalf("round trip differs at byte %d: %q vs %q", i, got[i:min(i+40, len(got))], text[i:min(i+40, len(text))])
	}
	if ratio := float64(len(text)) / float64(len(ids)); ratio < 2 {
		t.Errorf("%.2f bytes per token; a 1024-token vocabulary should do better than 2", ratio)
	}
	for _, id := range ids {
		if tok.Types[id] == TokenControl {
			t.Fatalf("plain text %q encoded to a control token", tok.Tokens[id])
		}
	}
}
