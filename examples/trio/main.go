package main

import (
	"os"

	"github.com/existence-loop/sdk/internal/cli"
)

func main() {
	os.Exit(cli.Trio(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
