package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"

	"github.com/existence-loop/sdk/agentdef"
)

// initCommand is `existence init DIR`: the trio written as agent
// definitions, a directory to start from for `existence run -agents`.
var initCommand = &command{
	name:    "init",
	summary: "write the trio (Cedar, Cipher, Vault) as agent definitions to start from",
	args:    "DIR",
	about: `Writes one folder per agent under DIR (scout/, analyst/, builder/), each with
an agent.yaml (id, name, traits, domains) and a system_prompt.md (its role),
then: {prog} DIR; existence run -agents DIR. Edit them, add folders, add a
workflow, working memory or a BOOTSTRAP.md: docs/agents.md. An existing
folder is never overwritten.`,
	setup: func(fs *flag.FlagSet) action {
		return func(_ context.Context, e *env, args []string) error {
			if len(args) != 1 {
				return usageErr(errors.New("want one argument: the directory to write"))
			}
			dir := args[0]
			var defs []*agentdef.Definition
			for _, m := range members {
				defs = append(defs, &agentdef.Definition{ID: m.id, Name: m.name, Role: m.role, Enabled: true, Traits: m.traits, Domains: m.domains})
			}
			if err := agentdef.Write(dir, defs...); err != nil {
				return err
			}
			for _, d := range defs {
				fmt.Fprintf(e.stdout, "wrote %s/%s/ (%s)\n", dir, d.ID, d.Name)
			}
			fmt.Fprintf(e.stdout, "run them: existence run -agents %s\n", dir)
			return nil
		}
	},
}
