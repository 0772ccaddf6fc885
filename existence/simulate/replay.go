package simulate

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/existence-loop/sdk/hollow"
	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/llm"
	"github.com/existence-loop/sdk/prompt"
)

// Record is one line of a replay file (JSON Lines): a model's reply to an
// existence cycle, and optionally how the goal it chose ended.
//
//	{"agent":"scout","reply":"{\"action\":\"goal\",\"content\":\"map the workspace\",...}","status":"DONE","summary":"wrote scout/map.md","seconds":2226,"latency_ms":9000}
type Record struct {
	// Agent is the agent id the reply was recorded for; empty means any
	// agent.
	Agent string `json:"agent,omitempty"`
	// Reply is the model's reply text to an existence cycle, exactly as
	// it came (it is parsed and validated like a live reply).
	Reply string `json:"reply"`
	// Status, Summary and Seconds are how the chosen goal ended (DONE,
	// FAILED or ABANDONED) and how long it took, in simulated seconds;
	// the [Report] executor asks for them. Empty Status means DONE.
	Status  string  `json:"status,omitempty"`
	Summary string  `json:"summary,omitempty"`
	Seconds float64 `json:"seconds,omitempty"`
	// LatencyMS is the simulated duration of the cycle's model call in
	// milliseconds; 0 means [Replay].Latency.
	LatencyMS int64 `json:"latency_ms,omitempty"`
}

// ErrReplay: a replay file cannot be used.
var ErrReplay = errors.New("simulate: bad replay file")

// ReadRecords reads a replay file (JSON Lines, one [Record] a line; blank
// lines are skipped). Errors wrap [ErrReplay] and name the line: a line that
// is not a Record, a record with an empty reply, or a file with no records.
func ReadRecords(r io.Reader) ([]Record, error) {
	var out []Record
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 4*1024*1024)
	for n := 1; sc.Scan(); n++ {
		line := sc.Bytes()
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var rec Record
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&rec); err != nil {
			return nil, fmt.Errorf("%w: line %d: %v", ErrReplay, n, err)
		}
		if rec.Reply == "" {
			return nil, fmt.Errorf("%w: line %d: empty reply", ErrReplay, n)
		}
		switch rec.Status {
		case "", "DONE", "FAILED", "ABANDONED":
		default:
			return nil, fmt.Errorf("%w: line %d: status %q (want DONE, FAILED or ABANDONED)", ErrReplay, n, rec.Status)
		}
		out = append(out, rec)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrReplay, err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: no records", ErrReplay)
	}
	return out, nil
}

// WriteRecords writes records as a replay file.
func WriteRecords(w io.Writer, recs []Record) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for _, r := range recs {
		if err := enc.Encode(r); err != nil {
			return err
		}
	}
	return nil
}

// RecordsFromHollow derives replay records from a hollow-agentOS memory
// directory (read with [hollow.Read], which writes nothing): one record per
// ended goal of each agent, oldest first, whose reply chooses the goal's
// objective and whose outcome is the goal's status, outcome and duration
// (completed_at − created_at). The registry holds no self-reported
// stressors or opinions, so the replies carry none. now stands in for
// missing timestamps.
func RecordsFromHollow(dir string, now time.Time) ([]Record, error) {
	l := identity.DefaultLimits()
	l.Goals = 100000
	states, _, err := hollow.Read(dir, hollow.Options{Limits: l, Now: func() time.Time { return now }})
	if err != nil {
		return nil, err
	}
	var out []Record
	for _, st := range states {
		for _, g := range st.Identity.Goals {
			if !g.Status.Ended() {
				continue
			}
			b, err := json.Marshal(prompt.Response{Action: "goal", Content: g.Objective, Reasoning: "replayed from the hollow-agentOS goal registry", NewOpenQuestions: []string{}, NewOpinions: []prompt.NewOpinion{}})
			if err != nil {
				return nil, err
			}
			secs := 0.0
			if d := g.Ended.Sub(g.Started); d > 0 {
				secs = float64(d.Round(time.Second) / time.Second)
			}
			out = append(out, Record{Agent: st.Identity.AgentID, Reply: string(b), Status: string(g.Status), Summary: g.Outcome, Seconds: secs})
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: %s holds no ended goals", ErrReplay, dir)
	}
	return out, nil
}

// Replay is a [ModelPolicy] that answers with recorded replies. Each agent
// replays the records of its own id in order, or, when there are none, all
// the records; after the last it starts over. A [Report] request is
// answered with the outcome of the record last replayed; a [ToolLoop] turn
// with that record's summary as the final answer (DONE when non-empty).
type Replay struct {
	// Records are the recorded replies (see [ReadRecords]); File is read
	// when Records is empty.
	Records []Record
	File    string
	// Latency is the duration of a call whose record has none; default
	// 8 s.
	Latency time.Duration
}

// Model implements [ModelPolicy]. Errors: those of [ReadRecords] and
// os.Open.
func (p Replay) Model(agent AgentSpec, _ uint64) (llm.Model, error) {
	recs := p.Records
	if len(recs) == 0 {
		if p.File == "" {
			return nil, fmt.Errorf("%w: Replay has neither Records nor File", ErrReplay)
		}
		f, err := os.Open(p.File)
		if err != nil {
			return nil, fmt.Errorf("simulate: %w", err)
		}
		recs, err = ReadRecords(f)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p.File, err)
		}
	}
	var own []Record
	for _, r := range recs {
		if r.Agent == agent.ID {
			own = append(own, r)
		}
	}
	if len(own) == 0 {
		own = recs
	}
	lat := p.Latency
	if lat <= 0 {
		lat = 8 * time.Second
	}
	return &replayModel{recs: own, latency: lat, last: -1}, nil
}

type replayModel struct {
	mu      sync.Mutex
	recs    []Record
	next    int
	last    int
	latency time.Duration
}

func (m *replayModel) Generate(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	var text string
	lat := m.latency
	switch kindOf(req) {
	case cycleRequest:
		m.last = m.next % len(m.recs)
		m.next++
		r := m.recs[m.last]
		text = r.Reply
		if r.LatencyMS > 0 {
			lat = time.Duration(r.LatencyMS) * time.Millisecond
		}
	default:
		var r Record
		if m.last >= 0 {
			r = m.recs[m.last]
		}
		status := r.Status
		if status == "" {
			status = "DONE"
		}
		if kindOf(req) == toolRequest {
			text = r.Summary
			if status != "DONE" {
				text = " "
			} else if text == "" {
				text = "done"
			}
			break
		}
		b, _ := json.Marshal(GoalReport{Status: status, Summary: r.Summary, Seconds: r.Seconds})
		text = string(b)
	}
	return &llm.Response{Model: "replay", Text: text, DoneReason: llm.DoneStop, PromptTokens: tokens(lastUser(req)), OutputTokens: tokens(text), Duration: lat}, nil
}
