package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"

	"github.com/existence-loop/sdk/internal/engine/gguf"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "mkgguf:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	flag := flag.NewFlagSet("mkgguf", flag.ContinueOnError)
	flag.SetOutput(stderr)
	sh := gguf.DefaultShaping()
	out := flag.String("out", "", "model file to write (required)")
	repo := flag.String("repo", ".", "repository whose .go and .md files train the tokenizer")
	seed := flag.Uint64("seed", 1, "seed of the random weights")
	tiny := flag.Bool("tiny", false, "write the tiny test shape instead of SmolLM2-135M's")
	vocab := flag.Int("vocab", 0, "vocabulary size (0: the shape's default)")
	flag.Float64Var(&sh.CloseBias, "close-bias", sh.CloseBias, "logit bias of tokens starting with '\"' (without ',')")
	flag.Float64Var(&sh.CommaBias, "comma-bias", sh.CommaBias, "logit bias of tokens containing ','")
	flag.Float64Var(&sh.StopBias, "stop-bias", sh.StopBias, "logit bias of <|im_end|>")
	flag.Float64Var(&sh.OpenerChannel, "opener-channel", sh.OpenerChannel, "bias channel of tokens ending in :\" or [\" (-1 reverses the biases for the next token)")
	flag.Float64Var(&sh.LogitStd, "logit-std", sh.LogitStd, "standard deviation of the random logits")
	if err := flag.Parse(args); err != nil {
		return err
	}
	if *out == "" || flag.NArg() > 0 {
		flag.Usage()
		return errors.New("-out FILE is required, and no arguments")
	}

	cfg := gguf.DefaultConfig()
	cfg.Seed, cfg.Shaping = *seed, sh
	if *tiny {
		cfg.Spec = gguf.Tiny()
	}
	if *vocab > 0 {
		cfg.Spec.Vocab = *vocab
	}
	corpus, err := gguf.ReadRepo(*repo)
	if err != nil {
		return err
	}
	if cfg.Tokenizer, err = gguf.Train(ctx, corpus, cfg.Spec.Vocab); err != nil {
		return err
	}
	want := cfg.Inputs()
	if f, err := os.Open(*out); err == nil {
		h, herr := gguf.Read(f)
		st, serr := f.Stat()
		f.Close()
		if herr == nil && serr == nil {
			if got, _ := h.Get(gguf.InputsKey); got == want {
				fmt.Fprintf(stdout, "%s\t%d bytes\t%d parameters\t(up to date)\n", *out, st.Size(), params(h))
				return nil
			}
		}
	}
	tmp, err := os.CreateTemp(filepath.Dir(*out), filepath.Base(*out)+".tmp*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	stats, err := gguf.Write(ctx, tmp, cfg)
	if err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o644); err != nil { // engines may run as other users
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), *out); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s\t%d bytes\t%d parameters\n", *out, stats.Bytes, stats.Params)
	return nil
}

func params(h *gguf.Header) int64 {
	var n int64
	for _, t := range h.Tensors {
		p := int64(1)
		for _, d := range t.Dims {
			p *= int64(d)
		}
		n += p
	}
	return n
}
