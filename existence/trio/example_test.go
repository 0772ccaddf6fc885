package trio_test

import (
	"fmt"

	"github.com/existence-loop/sdk/existence/trio"
)

// The roster that `existence run`, the simulator and examples/trio share.
func ExampleMembers() {
	for _, m := range trio.Members() {
		fmt.Println(m.ID, m.Name, m.Role)
	}
	// Output:
	// scout Cedar scout
	// analyst Cipher analyst
	// builder Vault builder
}
