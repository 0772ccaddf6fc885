package mcpserver

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Request is one request from an agent to its human (issue 12): an
// approval, a question or a build request, as list_requests shows it.
type Request struct {
	// ID identifies the request, e.g. "req-000042".
	ID string `json:"id"`
	// Agent is the id of the agent that asked.
	Agent string `json:"agent"`
	// Kind is "approval", "question" or "build_request".
	Kind string `json:"kind"`
	// Text is what the agent asks.
	Text string `json:"text"`
	// Status is "pending", "approved", "rejected" or "answered".
	Status string `json:"status"`
	// Answer is the person's answer or reason.
	Answer string `json:"answer,omitempty"`
	// Created is when the agent asked; Ended when it was answered (zero
	// while pending).
	Created time.Time `json:"created"`
	Ended   time.Time `json:"ended,omitzero"`
}

// Request statuses, as [Requests] takes them.
const (
	StatusPending  = "pending"
	StatusApproved = "approved"
	StatusRejected = "rejected"
	StatusAnswered = "answered"
)

// Requests is the queue of the agents' requests to the human, the smallest
// interface the request tools need.
type Requests interface {
	// List returns the requests of agentID ("" = every agent) with the
	// given status ("" = every status), oldest first.
	List(ctx context.Context, agentID, status string) ([]Request, error)
	// Resolve ends the pending request id with status (StatusApproved,
	// StatusRejected or StatusAnswered) and text (the answer, or a note),
	// and tells the agent (its next prompt shows the answer). It returns
	// the ended request. An unknown or already ended request is an error.
	Resolve(ctx context.Context, id, status, text string) (Request, error)
}

func (s *Server) addRequestTools() {
	need := func(tool string) error {
		if s.cfg.Requests == nil {
			return fmt.Errorf("%s: %w: the server has no request queue", tool, ErrNotConfigured)
		}
		return nil
	}
	mcp.AddTool(s.mcp, &mcp.Tool{Name: "list_requests", Annotations: readOnly,
		Description: "List the agents' requests to their human (approvals, questions, build requests): pending ones by default."},
		func(ctx context.Context, _ *mcp.CallToolRequest, in requestsArgs) (*mcp.CallToolResult, any, error) {
			if err := need("list_requests"); err != nil {
				return nil, nil, err
			}
			status := strings.ToLower(strings.TrimSpace(in.Status))
			switch status {
			case "":
				status = StatusPending
			case "all":
				status = ""
			case StatusPending, StatusApproved, StatusRejected, StatusAnswered:
			default:
				return nil, nil, fmt.Errorf("%w: status %q: want pending, approved, rejected, answered or all", ErrInvalid, in.Status)
			}
			if in.AgentID != "" {
				if _, err := s.agent(in.AgentID); err != nil {
					return nil, nil, err
				}
			}
			rs, err := s.cfg.Requests.List(ctx, in.AgentID, status)
			if err != nil {
				return nil, nil, err
			}
			if rs == nil {
				rs = []Request{}
			}
			return jsonResult(rs)
		})
	resolve := func(tool, status string) func(context.Context, *mcp.CallToolRequest, resolveArgs) (*mcp.CallToolResult, any, error) {
		return func(ctx context.Context, _ *mcp.CallToolRequest, in resolveArgs) (*mcp.CallToolResult, any, error) {
			if err := need(tool); err != nil {
				return nil, nil, err
			}
			r, err := s.cfg.Requests.Resolve(ctx, strings.TrimSpace(in.ID), status, strings.TrimSpace(in.Text))
			if err != nil {
				return nil, nil, err
			}
			return jsonResult(r)
		}
	}
	mcp.AddTool(s.mcp, &mcp.Tool{Name: "approve_request",
		Description: "Approve a pending request, with an optional note; the agent reads the approval in its next prompt."},
		resolve("approve_request", StatusApproved))
	mcp.AddTool(s.mcp, &mcp.Tool{Name: "reject_request",
		Description: "Reject a pending request, with the reason; the agent reads it in its next prompt."},
		resolve("reject_request", StatusRejected))
	mcp.AddTool(s.mcp, &mcp.Tool{Name: "answer_request",
		Description: "Answer a pending request (a question or a build request) in words; the agent reads the answer in its next prompt."},
		func(ctx context.Context, _ *mcp.CallToolRequest, in answerArgs) (*mcp.CallToolResult, any, error) {
			if err := need("answer_request"); err != nil {
				return nil, nil, err
			}
			if strings.TrimSpace(in.Answer) == "" {
				return nil, nil, fmt.Errorf("%w: empty answer", ErrInvalid)
			}
			r, err := s.cfg.Requests.Resolve(ctx, strings.TrimSpace(in.ID), StatusAnswered, strings.TrimSpace(in.Answer))
			if err != nil {
				return nil, nil, err
			}
			return jsonResult(r)
		})
}
