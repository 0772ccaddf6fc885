package taskqueue_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/existence-loop/sdk/store/taskqueue"
)

// A task goes pending → assigned → completed. The agent shows a claimed
// task at the top of its prompt (spec §2 row 1).
func Example() {
	ctx := context.Background()
	now := time.Date(2025, 3, 1, 9, 0, 0, 0, time.UTC)
	q := taskqueue.NewMemory(taskqueue.Options{Now: func() time.Time { return now }})

	sub, err := q.Submit(ctx, "Summarise the reports in ./reports", "") // any agent
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(sub.ID, sub.Status)

	tk, err := q.Next(ctx, "cedar")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("ASSIGNED TASK:", tk.Description)
	fmt.Println(tk.Status, "to", tk.AssignedTo)

	done, err := q.Finish(ctx, tk.ID, true, "wrote reports/summary.md")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(done.Status+":", done.Result)

	none, _ := q.Next(ctx, "cedar")
	fmt.Println("next:", none)
	// Output:
	// task-000001 pending
	// ASSIGNED TASK: Summarise the reports in ./reports
	// assigned to cedar
	// completed: wrote reports/summary.md
	// next: <nil>
}

// The queue lives in a directory; another Queue (here, or in another
// process) opened on it sees the same tasks.
func ExampleOpen() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "taskqueue-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	host, err := taskqueue.Open(dir, taskqueue.Options{})
	if err != nil {
		log.Fatal(err)
	}
	if _, err := host.Submit(ctx, "Check the build", "vault"); err != nil {
		log.Fatal(err)
	}

	agent, err := taskqueue.Open(dir, taskqueue.Options{}) // e.g. after a restart
	if err != nil {
		log.Fatal(err)
	}
	tk, err := agent.Next(ctx, "vault")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(tk.ID, tk.Description, tk.Status)
	// Output:
	// task-000001 Check the build assigned
}

// An assigned task with no result after the timeout (2h by default) fails.
func ExampleQueue_Expire() {
	ctx := context.Background()
	now := time.Date(2025, 3, 1, 9, 0, 0, 0, time.UTC)
	q := taskqueue.NewMemory(taskqueue.Options{Now: func() time.Time { return now }})

	sub, _ := q.Submit(ctx, "A long job", "cipher")
	_, _ = q.Next(ctx, "cipher")

	now = now.Add(2 * time.Hour)
	expired, err := q.Expire(ctx)
	if err != nil {
		log.Fatal(err)
	}
	for _, t := range expired {
		fmt.Println(t.ID, t.Status, t.Result, t.Ended.Format(time.TimeOnly))
	}

	_, err = q.Finish(ctx, sub.ID, true, "too late")
	fmt.Println(err)
	// Output:
	// task-000001 failed no result after 2h0m0s 11:00:00
	// task: already ended: task-000001 is failed
}
