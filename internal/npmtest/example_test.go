package npmtest_test

import (
	"fmt"
	"path/filepath"

	"github.com/existence-loop/sdk/internal/npmtest"
)

// The tools' executables are in node_modules/.bin of the install
// directory; a test runs them with npmtest.Env, whose PATH starts there.
func ExampleBinDir() {
	fmt.Println(filepath.Base(filepath.Dir(npmtest.BinDir())), filepath.Base(npmtest.BinDir()))
	// Output: node_modules .bin
}
