package hollow

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/existence-loop/sdk/identity"
)

// staleActiveOutcome is the outcome of a goal that was active in the source
// but is not the newest goal.
const staleActiveOutcome = "abandoned on import from hollow-agentOS: only the newest goal can stay active"

// registry converts goals/{id}/registry.jsonl, one goal per line, into a
// goal history sorted by start time (ties keep file order). Bad lines are
// skipped with a warning that names the line number. Objectives are put on
// one line. Only the newest goal may stay active: an older active goal
// becomes ABANDONED. The only error is a read error of r.
func (d *decoder) registry(r io.Reader, where, agentID string) ([]identity.Goal, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	var goals []identity.Goal
	ids := map[string]int{}
	collapsed := 0
	for lineNo := 1; ; lineNo++ {
		line, tooLong, err := readLine(br, MaxLineSize)
		switch {
		case tooLong:
			d.warn("%s:%d: skipped: line longer than %d bytes", where, lineNo, MaxLineSize)
		case len(bytes.TrimSpace(line)) > 0:
			if g, ok, nl := d.goal(line, lineNo, fmt.Sprintf("%s:%d", where, lineNo), agentID); ok {
				if prev, dup := ids[g.ID]; dup {
					d.warn("%s:%d: goal_id %q also on line %d; both imported", where, lineNo, g.ID, prev)
				} else {
					ids[g.ID] = lineNo
				}
				if nl {
					collapsed++
				}
				goals = append(goals, g)
			}
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	if collapsed > 0 {
		d.warn("%s: %d goal objectives spanned several lines; each was put on one line", where, collapsed)
	}

	slices.SortStableFunc(goals, func(a, b identity.Goal) int { return a.Started.Compare(b.Started) })
	stale := 0
	for i := range len(goals) - 1 {
		if g := &goals[i]; g.Status == identity.Active {
			// It ended, at the latest, when the next goal started.
			g.Status, g.Outcome, g.Ended = identity.Abandoned, staleActiveOutcome, goals[i+1].Started
			stale++
		}
	}
	if stale > 0 {
		d.warn("%s: %d older active goals marked ABANDONED; only the newest goal can stay active", where, stale)
	}
	return goals, nil
}

// readLine reads one line of at most max bytes (not counting the line
// break). A longer line is consumed and reported with tooLong, without
// keeping it in memory. err is io.EOF after the last line.
func readLine(br *bufio.Reader, max int) (line []byte, tooLong bool, err error) {
	for {
		frag, err := br.ReadSlice('\n')
		if !tooLong {
			if len(line)+len(bytes.TrimRight(frag, "\r\n")) > max {
				tooLong, line = true, nil
			} else {
				line = append(line, frag...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return line, tooLong, err
	}
}

// goal converts one registry line. ok is false when the line is skipped;
// collapsed reports an objective that spanned several lines.
func (d *decoder) goal(line []byte, lineNo int, where, agentID string) (g identity.Goal, ok, collapsed bool) {
	o, err := d.parseObject(line, where)
	if err != nil {
		d.warn("%s: skipped: not a JSON object (%v)", where, err)
		return g, false, false
	}
	rawObjective := o.str("objective")
	g.Objective = oneLine(rawObjective)
	if g.Objective == "" {
		d.warn("%s: skipped: no objective", where)
		return g, false, false
	}
	collapsed = g.Objective != strings.TrimSpace(rawObjective)
	g.ID = o.str("goal_id")
	if g.ID == "" {
		g.ID = fmt.Sprintf("hollow-line-%d", lineNo)
		d.warn("%s: no goal_id; set to %q", where, g.ID)
	}
	if owner := o.str("agent_id"); owner != "" && owner != agentID {
		d.warn("%s: agent_id is %q; imported for %q, whose registry it is in", where, owner, agentID)
	}

	status := strings.ToLower(o.str("status"))
	known := true
	switch status {
	case "completed", "done":
		g.Status = identity.Done
	case "failed":
		g.Status = identity.Failed
	case "abandoned":
		g.Status = identity.Abandoned
	case "active":
		g.Status = identity.Active
	default:
		d.warn("%s: status %q; imported as ABANDONED", where, status)
		g.Status, known = identity.Abandoned, false
	}

	started, hasStart := d.firstTime(o, "created_at", "updated_at", "last_worked_on")
	if !hasStart {
		d.warn("%s: no created_at; set to the import time", where)
		started = d.now
	}
	g.Started = started
	if g.Status.Ended() {
		if ended, ok := d.firstTime(o, "completed_at", "updated_at", "last_worked_on"); ok {
			g.Ended = ended
		} else {
			g.Ended = g.Started
		}
	}

	g.Outcome = d.outcome(o, rawObjective)
	if !known && g.Outcome == "" {
		g.Outcome = fmt.Sprintf("status %q in hollow-agentOS", status)
	}
	return g, true, collapsed
}

// firstTime returns the first of the time fields keys that is present and
// readable.
func (d *decoder) firstTime(o object, keys ...string) (time.Time, bool) {
	for _, k := range keys {
		if t, ok := o.timestamp(k); ok {
			return t, true
		}
	}
	return time.Time{}, false
}

// outcome returns the outcome text the original recorded for the goal:
// metrics.failure_reason (without the objective the original repeated in
// it), or "". Step counts and progress are not outcomes: the prompt never
// shows a bare step count as what a goal produced (spec §2 row 13).
func (d *decoder) outcome(o object, rawObjective string) string {
	r := o.raw("metrics")
	if r == nil {
		return ""
	}
	m, ok := o.child(r, o.where+": metrics")
	if !ok {
		return ""
	}
	reason := oneLine(m.str("failure_reason"))
	if reason == "" {
		return ""
	}
	prefix := "Goal '" + oneLine(rawObjective) + "' "
	if rest, found := strings.CutPrefix(reason, prefix); found && rest != "" {
		return upperFirst(rest)
	}
	return reason
}

// upperFirst returns s with its first letter in upper case.
func upperFirst(s string) string {
	r, size := utf8.DecodeRuneInString(s)
	if r == utf8.RuneError {
		return s
	}
	return string(unicode.ToUpper(r)) + s[size:]
}
