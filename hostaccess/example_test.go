package hostaccess_test

import (
	"errors"
	"fmt"

	"github.com/existence-loop/sdk/hostaccess"
)

// A server off loopback needs a token that passes CheckToken;
// GenerateToken's always do.
func ExampleCheckToken() {
	err := hostaccess.CheckToken("aaaaaaaaaaaaaaaaaaaa")
	fmt.Println(errors.Is(err, hostaccess.ErrWeakToken))
	fmt.Println(hostaccess.CheckToken("kP3v-9Qz_x7LmR2tWb8N"))
	// Output:
	// true
	// <nil>
}
