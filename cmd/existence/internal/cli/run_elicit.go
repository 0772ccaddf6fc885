package cli

// An MCP server's question during a tool call (elicitation/create) goes
// to the person through the human-requests queue, as an agent's ask_human
// does, and the person's answer goes back to the server.

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/existence-loop/sdk/existence/requests"
	"github.com/existence-loop/sdk/existence/toolloop/mcptools"
)

// elicitPoll is how often a waiting elicitation reads the queue.
const elicitPoll = time.Second

// elicitHuman returns an mcptools.ElicitFunc that files each form
// elicitation as a question in q, under the agent whose tool call the
// server serves (else agent), and waits for the person's answer, reading
// the queue every poll, until the tool call's timeout ends ctx:
//
//   - answered: accepted with the answer as the form's content: a JSON
//     object, or for a form of one field the text as that field's value
//     (a number or true/false when the field wants one);
//   - approved: accepted with the form's defaults;
//   - rejected, or an answer that fits no field: declined;
//   - no answer before ctx ends: cancelled, and the request is closed as
//     rejected ("the MCP call ended") so that nobody answers it late.
//
// A URL elicitation is declined: the person would have to visit a page.
// Errors: the queue's.
func elicitHuman(q *requests.Queue, agent string, poll time.Duration) mcptools.ElicitFunc {
	return func(ctx context.Context, e mcptools.Elicitation) (*mcp.ElicitResult, error) {
		if e.Mode != "form" {
			return &mcp.ElicitResult{Action: "decline"}, nil
		}
		fields := formFields(e.Schema)
		text := fmt.Sprintf("The MCP server %q asks: %s", e.Server, e.Message)
		switch names := sortedKeys(fields); len(names) {
		case 0:
		case 1:
			text += fmt.Sprintf(" (answer with the %s; approve to accept the defaults, reject to decline)", names[0])
		default:
			text += fmt.Sprintf(" (answer with a JSON object of %s; approve to accept the defaults, reject to decline)", strings.Join(names, ", "))
		}
		r, err := q.Submit(ctx, cmp.Or(e.Agent, agent), requests.Question, text)
		if err != nil {
			return nil, err
		}
		tick := time.NewTicker(poll)
		defer tick.Stop()
		for {
			got, err := q.Get(ctx, r.ID)
			if err != nil && ctx.Err() == nil {
				return nil, err
			}
			switch got.Status {
			case requests.Rejected:
				return &mcp.ElicitResult{Action: "decline"}, nil
			case requests.Approved:
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{}}, nil
			case requests.Answered:
				content, ok := formContent(fields, got.Answer)
				if !ok {
					return &mcp.ElicitResult{Action: "decline"}, nil
				}
				return &mcp.ElicitResult{Action: "accept", Content: content}, nil
			}
			select {
			case <-ctx.Done():
				_, err := q.Answer(context.WithoutCancel(ctx), r.ID, requests.Rejected, "the MCP call ended before an answer")
				return &mcp.ElicitResult{Action: "cancel"}, err
			case <-tick.C:
			}
		}
	}
}

// formFields returns the type of each property of an elicitation schema
// ("string", "number", "integer", "boolean"; "" when not given).
func formFields(schema any) map[string]string {
	b, err := json.Marshal(schema)
	if err != nil {
		return nil
	}
	var s struct {
		Properties map[string]struct {
			Type string `json:"type"`
		} `json:"properties"`
	}
	if json.Unmarshal(b, &s) != nil {
		return nil
	}
	out := map[string]string{}
	for name, p := range s.Properties {
		out[name] = p.Type
	}
	return out
}

// formContent reads a person's answer as a form's content: a JSON object
// as is, else, for a form of one field, the text as that field's value.
func formContent(fields map[string]string, answer string) (map[string]any, bool) {
	answer = strings.TrimSpace(answer)
	var obj map[string]any
	if json.Unmarshal([]byte(answer), &obj) == nil && obj != nil {
		return obj, true
	}
	if len(fields) != 1 {
		return nil, false
	}
	for name, typ := range fields {
		switch typ {
		case "number", "integer":
			n, err := strconv.ParseFloat(answer, 64)
			if err != nil {
				return nil, false
			}
			return map[string]any{name: n}, true
		case "boolean":
			v, err := strconv.ParseBool(answer)
			if err != nil {
				return nil, false
			}
			return map[string]any{name: v}, true
		default:
			return map[string]any{name: answer}, true
		}
	}
	return nil, false
}

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
