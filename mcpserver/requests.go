package mcpserver

import (
	"context"
	"fmt"
	"strings"

	"github.com/existence-loop/sdk/existence/requests"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Requests is the queue of the agents' requests to the human (package
// existence/requests); *requests.Queue implements it.
type Requests interface {
	// List returns the requests f selects, oldest first.
	List(ctx context.Context, f requests.Filter) ([]requests.Request, error)
	// Answer ends the pending request id with status and answer.
	Answer(ctx context.Context, id string, status requests.Status, answer string) (requests.Request, error)
}

var _ Requests = (*requests.Queue)(nil)

// resolve ends a request and delivers the answer to the asking agent's
// inbox (requests.Deliver), so that its next prompt shows it.
func (s *Server) resolve(ctx context.Context, id string, status requests.Status, text string) (*mcp.CallToolResult, any, error) {
	r, err := s.cfg.Requests.Answer(ctx, id, status, text)
	if err != nil {
		return nil, nil, err
	}
	a := s.cfg.Agents.Agent(r.Agent)
	if a == nil {
		return nil, nil, fmt.Errorf("%s is %s, but %w %q to tell", r.ID, r.Status, ErrNoAgent, r.Agent)
	}
	if err := requests.Deliver(ctx, a, r); err != nil {
		return nil, nil, fmt.Errorf("%s is %s, but telling %s failed: %w", r.ID, r.Status, r.Agent, err)
	}
	return jsonResult(r)
}

func (s *Server) addRequestTools() {
	need := func(tool string) error {
		if s.cfg.Requests == nil {
			return fmt.Errorf("%s: %w: the server has no request queue", tool, ErrNotConfigured)
		}
		return nil
	}
	addTool(s.mcp, &mcp.Tool{Name: "list_requests", Annotations: readOnly,
		Description: "List the agents' requests to their human (approvals, questions, build requests): pending ones by default."},
		func(ctx context.Context, _ *mcp.CallToolRequest, in requestsArgs) (*mcp.CallToolResult, any, error) {
			if err := need("list_requests"); err != nil {
				return nil, nil, err
			}
			status := requests.Status(strings.ToLower(strings.TrimSpace(in.Status)))
			switch status {
			case "":
				status = requests.Pending
			case "all":
				status = ""
			case requests.Pending, requests.Approved, requests.Rejected, requests.Answered:
			default:
				return nil, nil, fmt.Errorf("%w: status %q: want pending, approved, rejected, answered or all", ErrInvalid, in.Status)
			}
			if in.AgentID != "" {
				if _, err := s.agent(in.AgentID); err != nil {
					return nil, nil, err
				}
			}
			rs, err := s.cfg.Requests.List(ctx, requests.Filter{Agent: in.AgentID, Status: status})
			if err != nil {
				return nil, nil, err
			}
			if rs == nil {
				rs = []requests.Request{}
			}
			return jsonResult(rs)
		})
	resolve := func(tool string, status requests.Status) func(context.Context, *mcp.CallToolRequest, resolveArgs) (*mcp.CallToolResult, any, error) {
		return func(ctx context.Context, _ *mcp.CallToolRequest, in resolveArgs) (*mcp.CallToolResult, any, error) {
			if err := need(tool); err != nil {
				return nil, nil, err
			}
			return s.resolve(ctx, strings.TrimSpace(in.ID), status, in.Text)
		}
	}
	addTool(s.mcp, &mcp.Tool{Name: "approve_request",
		Description: "Approve a pending request, with an optional note; the agent reads the approval in its next prompt."},
		resolve("approve_request", requests.Approved))
	addTool(s.mcp, &mcp.Tool{Name: "reject_request",
		Description: "Reject a pending request, with the reason; the agent reads it in its next prompt."},
		resolve("reject_request", requests.Rejected))
	addTool(s.mcp, &mcp.Tool{Name: "answer_request",
		Description: "Answer a pending request (a question or a build request) in words; the agent reads the answer in its next prompt."},
		func(ctx context.Context, _ *mcp.CallToolRequest, in answerArgs) (*mcp.CallToolResult, any, error) {
			if err := need("answer_request"); err != nil {
				return nil, nil, err
			}
			if strings.TrimSpace(in.Answer) == "" {
				return nil, nil, fmt.Errorf("%w: empty answer", ErrInvalid)
			}
			return s.resolve(ctx, strings.TrimSpace(in.ID), requests.Answered, in.Answer)
		})
}
