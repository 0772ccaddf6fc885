package task_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/existence-loop/sdk/store/taskqueue"
	"github.com/existence-loop/sdk/task"
)

// An agent draws its work from any task.Source: here the in-memory queue of
// store/taskqueue (store/sqlitestore and store/pgstore keep the
// same queue in their databases). A person submits; the agent peeks, claims,
// gets its task back after a restart, and finishes it once.
func ExampleSource() {
	ctx := context.Background()
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	q := taskqueue.NewMemory(taskqueue.Options{Now: func() time.Time { return now }})
	if _, err := q.Submit(ctx, "Fix the rate limiter", "scout"); err != nil {
		log.Fatal(err)
	}
	if _, err := q.Submit(ctx, "Index the docs", ""); err != nil { // for any agent
		log.Fatal(err)
	}

	var src task.Source = q // what existence.Config.Tasks takes
	next, _ := src.Peek(ctx, "vault")
	fmt.Println("vault would get:", next.ID, next.Description, next.Status)
	t, err := src.Next(ctx, "scout")
	if err != nil {
		log.Fatal(err)
	}
	again, _ := src.Next(ctx, "scout") // after a restart: the same task
	fmt.Println("scout works on:", t.ID, t.Status, again.ID == t.ID)

	done, err := src.Finish(ctx, t.ID, true, "limiter now refills per second")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(done.ID, done.Status, done.Status.Ended(), done.Result)
	_, err = src.Finish(ctx, t.ID, false, "late")
	fmt.Println("second finish:", errors.Is(err, task.ErrEnded))
	// Output:
	// vault would get: task-000002 Index the docs pending
	// scout works on: task-000001 assigned true
	// task-000001 completed true limiter now refills per second
	// second finish: true
}

// The zero value of a Limits field means its default.
func ExampleLimits_WithDefaults() {
	l := task.Limits{MaxTasks: 50}.WithDefaults()
	fmt.Println(l.Timeout, l.MaxDescription, l.MaxResult, l.MaxTasks)
	// Output:
	// 2h0m0s 2000 2000 50
}

// Every queue applies one rule to a submission before storing it:
// CheckSubmit trims the description, refuses a blank one or a bad agent
// id, and cuts the description to the queue's limit in characters.
func ExampleCheckSubmit() {
	desc, err := task.CheckSubmit("  Index the docs  ", "scout", 9)
	fmt.Printf("%q %v\n", desc, err)
	_, err = task.CheckSubmit(" \n ", "", 0)
	fmt.Println(errors.Is(err, task.ErrInvalid), err)
	_, err = task.CheckSubmit("x", "../etc", 0)
	fmt.Println(errors.Is(err, task.ErrInvalid))
	// Output:
	// "Index the" <nil>
	// true task: invalid argument: blank task description
	// true
}
