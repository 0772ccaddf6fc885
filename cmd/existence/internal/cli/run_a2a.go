package cli

// -a2a-agent gives the trio's agents remote A2A agents as tools
// (existence/toolloop/a2atools).

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/existence-loop/sdk/existence/toolloop"
	"github.com/existence-loop/sdk/existence/toolloop/a2atools"
)

// a2aOptions are the -a2a-agent flags.
type a2aOptions struct {
	agents []string // -a2a-agent URL, repeatable
	token  string   // -a2a-token, default $EXISTENCE_A2A_TOKEN
}

// a2aFlags registers -a2a-agent and -a2a-token.
func a2aFlags(fs *flag.FlagSet, o *a2aOptions) {
	fs.Func("a2a-agent", "a remote A2A agent the agents may give tasks to, as a tool: its agent card's URL or its base URL (repeatable)", func(s string) error {
		o.agents = append(o.agents, s)
		return nil
	})
	fs.StringVar(&o.token, "a2a-token", os.Getenv("EXISTENCE_A2A_TOKEN"), "bearer token sent to the -a2a-agent agents (default $EXISTENCE_A2A_TOKEN)")
}

// connectA2A fetches each -a2a-agent's card and returns its tool, with
// what closes the clients. A card that cannot be fetched stops the run:
// the operator named the agent.
func connectA2A(ctx context.Context, o a2aOptions, stderr io.Writer) ([]toolloop.Tool, func(), error) {
	var tools []toolloop.Tool
	var agents []*a2atools.Agent
	closeAll := func() {
		for _, a := range agents {
			_ = a.Close()
		}
	}
	names := map[string]bool{}
	for _, u := range o.agents {
		a, err := a2atools.Connect(ctx, a2atools.Config{URL: u, Token: o.token})
		if err != nil {
			closeAll()
			return nil, nil, fmt.Errorf("-a2a-agent %s: %w", u, err)
		}
		agents = append(agents, a)
		t := a.Tool()
		if names[t.Name()] {
			closeAll()
			return nil, nil, errors.New("-a2a-agent: two agents give the tool name " + t.Name())
		}
		names[t.Name()] = true
		tools = append(tools, t)
		fmt.Fprintf(stderr, "trio: the remote agent %q (A2A, %s) is the tool %s\n", a.Card().Name, u, t.Name())
	}
	return tools, closeAll, nil
}
