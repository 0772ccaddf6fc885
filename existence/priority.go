package existence

import (
	"context"

	"github.com/existence-loop/sdk/llm"
	"github.com/existence-loop/sdk/llm/middleware"
	"github.com/existence-loop/sdk/llm/pool"
)

// priorityModel marks every call of an agent's model stack with the
// agent's id ([pool.WithAgent]: an [pool.Pool] pins the agent to one server
// by it) and the calls made for the priority lane (a cycle it dispatched,
// or the executor of a goal such a cycle chose) with [middleware.WithPriority],
// so that the model stack beneath treats them first: [middleware.WithRetry]
// retries them after a short wait rather than the 10 s after a 503 meant
// to relieve a loaded server.
type priorityModel struct {
	next llm.Model
	id   string
}

var _ llm.Model = priorityModel{}

// Unwrap returns the wrapped model ([llm.Unwrapper]).
func (x priorityModel) Unwrap() llm.Model { return x.next }

// Name returns the wrapped model's name, if it has one.
func (x priorityModel) Name() string {
	if n, ok := x.next.(interface{ Name() string }); ok {
		return n.Name()
	}
	return ""
}

func (x priorityModel) Generate(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	if pool.AgentFrom(ctx) == "" {
		ctx = pool.WithAgent(ctx, x.id)
	}
	if l, ok := callLane(ctx); ok && l == LanePriority {
		ctx = middleware.WithPriority(ctx)
	}
	return x.next.Generate(ctx, req)
}
