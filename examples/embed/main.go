package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	// After the first signal, a second one kills the process at once.
	context.AfterFunc(ctx, stop)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run is main without the process: it parses args, serves until ctx ends
// and returns the exit code: 0 after a graceful shutdown (or -h), 2 for bad
// flags, 1 for any other failure. Tests call it directly.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	opts, err := parseFlags(args, stderr)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		fmt.Fprintln(stderr, "embed:", err)
		return 2
	}
	if err := serve(ctx, opts, stdout, stderr); err != nil {
		fmt.Fprintln(stderr, "embed:", err)
		return 1
	}
	return 0
}
