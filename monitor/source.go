package monitor

import (
	"context"
	"errors"
	"fmt"

	"github.com/existence-loop/sdk/existence"
	"github.com/existence-loop/sdk/hostaccess"
	"github.com/existence-loop/sdk/identity"
)

// Source is what the monitor shows and reaches of its agents: every
// agent's status, one agent's identity, host messages, and the inbox an
// answered request goes to. Agents that run in this process come through
// [Config].Runner (an *runner.Runner, or [hostaccess.Single]), which the monitor
// adapts with [RunnerSource]; a program that watches agents running in
// other processes implements Source over their store (the existence
// command's serve does). Implementations are safe for concurrent use.
type Source interface {
	// Statuses returns every agent's status, in a stable order.
	Statuses(ctx context.Context) ([]existence.Status, error)
	// Detail returns agent id's status and its identity, goal history
	// included. Errors: [ErrNoAgent] (with errors.Is) when there is no
	// such agent; the store's error.
	Detail(ctx context.Context, id string) (existence.Status, identity.Identity, error)
	// SayAsHost delivers a host message (A PERSON SAID) to the agents
	// with the given ids, or to every agent when none is given. Errors:
	// [ErrNoAgent] for an id it does not know, and then nothing is
	// delivered; [ErrUnsupported] when it cannot reach the agents; the
	// error saving the message.
	SayAsHost(ctx context.Context, text string, to ...string) error
	// DeliverToInbox puts m in agent id's inbox, where it appears in the
	// agent's next prompt (the answer to a request, see
	// requests.Message). Errors: [ErrNoAgent]; [ErrUnsupported] when it
	// cannot reach the agent; the error saving the message.
	DeliverToInbox(ctx context.Context, id string, m identity.AgentMessage) error
}

// Errors of a [Source]. The monitor answers [ErrNoAgent] with 404 and
// [ErrUnsupported] with 501, with the error's text.
var (
	// ErrNoAgent: the request names an agent the Source does not know.
	ErrNoAgent = errors.New("no agent")
	// ErrUnsupported: the Source cannot do what was asked, for example
	// deliver a host message to an agent that runs in another process
	// through a store that cannot carry messages.
	ErrUnsupported = errors.New("not supported")
)

// NoAgentError returns an error matching [ErrNoAgent] that names id:
// `no agent "id"`.
func NoAgentError(id string) error { return fmt.Errorf("%w %s", ErrNoAgent, quote(id)) }

// RunnerSource adapts a [hostaccess.Agents] (the agents of this process) to
// [Source]: statuses from each agent's Status, the identity from its
// State, host messages through the Runner (every id checked first) and
// answers through the agent's DeliverToInbox. It never returns
// [ErrUnsupported].
func RunnerSource(r hostaccess.Agents) Source { return runnerSource{r} }

type runnerSource struct{ r hostaccess.Agents }

func (s runnerSource) Statuses(context.Context) ([]existence.Status, error) {
	agents := s.r.Agents()
	out := make([]existence.Status, 0, len(agents))
	for _, a := range agents {
		out = append(out, a.Status())
	}
	return out, nil
}

func (s runnerSource) Detail(_ context.Context, id string) (existence.Status, identity.Identity, error) {
	a := s.r.Agent(id)
	if a == nil {
		return existence.Status{}, identity.Identity{}, NoAgentError(id)
	}
	return a.Status(), a.State().Identity, nil
}

func (s runnerSource) SayAsHost(ctx context.Context, text string, to ...string) error {
	for _, id := range to {
		if s.r.Agent(id) == nil {
			return NoAgentError(id)
		}
	}
	return s.r.SayAsHost(ctx, text, to...)
}

func (s runnerSource) DeliverToInbox(ctx context.Context, id string, m identity.AgentMessage) error {
	a := s.r.Agent(id)
	if a == nil {
		return NoAgentError(id)
	}
	return a.DeliverToInbox(ctx, m)
}
