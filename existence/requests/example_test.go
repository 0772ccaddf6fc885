package requests_test

import (
	"context"
	"fmt"
	"time"

	"github.com/existence-loop/sdk/existence/requests"
)

func Example() {
	ctx := context.Background()
	q := requests.NewMemory(requests.Options{Now: func() time.Time { return time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC) }})
	r, _ := q.Submit(ctx, "builder", requests.Approval, "publish design/pump.md to the wiki")
	fmt.Println(requests.Describe(r, r.Created.Add(2*time.Hour)))
	r, _ = q.Answer(ctx, "1", requests.Approved, "go ahead")
	fmt.Println(requests.Message(r).Text)
	// Output:
	// req-000001 (approval, pending for 2h0m0s): "publish design/pump.md to the wiki"
	// your request req-000001 (approval: "publish design/pump.md to the wiki") was approved: go ahead
}
