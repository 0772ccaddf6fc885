package pgstore_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/existence-loop/sdk/existence"
	"github.com/existence-loop/sdk/existence/runner"
	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/lease"
	"github.com/existence-loop/sdk/llm/llmtest"
	"github.com/existence-loop/sdk/store/pgstore"
)

// A process shares a population of agents with every other process using
// the same database: a Runner with Leases claims up to MaxAgents of them,
// renews the leases, and releases them on a graceful shutdown.
func Example_runner() {
	ctx := context.Background()
	url := os.Getenv("DATABASE_URL") // e.g. postgres://postgres@127.0.0.1:5432/agents?sslmode=disable
	if url == "" {
		return
	}
	store, err := pgstore.Open(ctx, url, pgstore.Options{TTL: 15 * time.Second})
	if err != nil {
		fmt.Println(err) // ErrConfig, ErrUnreachable or ErrSchemaTooNew, at once
		return
	}
	defer store.Close()
	_ = store.Enroll(ctx, "scout", "analyst", "builder")
	rn, err := runner.New(runner.Config{
		Leases: store, MaxAgents: 100, RenewEvery: 5 * time.Second,
		NewAgent: func(ctx context.Context, l lease.Lease) (existence.Config, error) {
			f := store.Fenced(l) // every write checked against l.Epoch
			return existence.Config{ID: l.AgentID, Name: l.AgentID, Model: llmtest.NewFake(), Store: f, Tasks: f.Tasks()}, nil
		},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	go store.Relay(ctx, time.Second, func(id string) pgstore.Recipient {
		if a := rn.Agent(id); a != nil {
			return a
		}
		return nil
	})
	_ = rn.Run(ctx)
}

// A save by a process whose lease was taken over is refused.
func ExampleFencedError() {
	err := error(&pgstore.FencedError{AgentID: "scout", Epoch: 3, Holder: "host-b:4242", HolderEpoch: 4})
	fmt.Println(errors.Is(err, pgstore.ErrFenced))
	fmt.Println(err)
	// Output:
	// true
	// pgstore: lease lost (fenced): agent "scout" epoch 3; now held by host-b:4242 at epoch 4
}

var _ identity.Store = (*pgstore.Store)(nil)
