package main

import (
	"context"
	"io"

	"github.com/existence-loop/sdk/existence"
	"github.com/existence-loop/sdk/existence/requests"
)

func runTUI(ctx context.Context, o *options, runner *existence.Runner, reqs *requests.Queue, late *lateObservers, stderr io.Writer) error {
	return runner.Run(ctx)
}
