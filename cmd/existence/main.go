package main

import (
	"os"

	"github.com/existence-loop/sdk/cmd/existence/internal/cli"
)

func main() {
	os.Exit(cli.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
