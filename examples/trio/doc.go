// Command trio runs Cedar (scout), Cipher (analyst) and Vault (builder) as
// peers in one process. It is `existence run` (cmd/existence) under its
// old name, kept for the scripts that run it: the same flags, output and
// exit codes.
//
//	go run ./examples/trio -dry-run   # print each agent's prompt; no model call
//	go run ./examples/trio -h         # every flag
package main
