package budget_test

import (
	"fmt"

	"github.com/existence-loop/sdk/existence/budget"
)

// A token budget of 50,000 tokens an hour per agent, with 5,000 more that
// host messages and assigned tasks may still spend once it is spent.
func ExampleParse() {
	b, err := budget.Parse("50000/1h+5000")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(b.Tokens, b.Window, b.Reserve)
	// runner.Config{Budget: b} gives it to every agent a runner adds.

	_, err = budget.Parse("50000 an hour")
	fmt.Println(err)
	// Output:
	// 50000 1h0m0s 5000
	// budget: invalid token budget: "50000 an hour": want TOKENS/DURATION, e.g. 4000/1m
}
