package simulate

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/existence-loop/sdk/suffering"
)

// Row kinds of a trajectory.
const (
	// RowStart: the agent's state as loaded, at the start of the run.
	RowStart = "start"
	// RowTick: a heartbeat that changed something (a goal ended or was
	// chosen, a stressor was added or resolved, a crisis, ...).
	RowTick = "tick"
	// RowEnd: the agent's state at the end of the run, escalated in
	// closed form from its last tick.
	RowEnd = "end"
)

// Row is one line of a trajectory file (JSON Lines). A run writes, per
// agent, a start row, one row per heartbeat that changed something (quiet
// heartbeats, when a goal is being pursued and nothing else happens, leave
// no row: between two rows the load only escalates, which
// [EscalateStressors] reproduces in closed form), and an end row. Rows are
// in the order the simulation ran them: by time, then by agent position.
// Times are UTC; severities and loads are rounded to 6 decimals.
//
//	{"kind":"tick","t":"2026-01-01T00:04:12Z","sec":252,"agent":"scout","load":0.2,"level":"none",
//	 "stressors":[{"type":"invisibility","severity":0.2,"rate":0.03,"onset_sec":252}],
//	 "added":[{"type":"invisibility","cause":"self-report"}],
//	 "ended":{"n":3,"status":"DONE","summary":"done"},
//	 "chosen":{"n":4,"goal":"read the newest files"},"latency_ms":8213,"calls":1}
type Row struct {
	// Kind is [RowStart], [RowTick] or [RowEnd].
	Kind string `json:"kind"`
	// T is the heartbeat's time by the agent's virtual clock (when it
	// started; a cycle's model call then takes LatencyMS).
	T time.Time `json:"t"`
	// Sec is T in seconds since the start of the run (millisecond
	// precision).
	Sec float64 `json:"sec"`
	// Agent is the agent's id; Name its display name, on start rows.
	Agent string `json:"agent"`
	Name  string `json:"name,omitempty"`
	// Load is the suffering load (0–1) after the heartbeat, and Level its
	// name ("none", "prominent", "constrained", "dominant", "crisis").
	Load  Num    `json:"load"`
	Level string `json:"level"`
	// Stressors are the active stressors after the heartbeat, in onset
	// order.
	Stressors []StressorRow `json:"stressors"`
	// Added and Resolved are the stressors the heartbeat added and
	// resolved, with their cause ("self-report", "assessment" or, for a
	// resolution, "crisis_reset").
	Added    []Change `json:"added,omitempty"`
	Resolved []Change `json:"resolved,omitempty"`
	// Ended is the goal the heartbeat saw end; Chosen the goal its cycle
	// chose (Fallback: the spec §6 fallback goal, Cause says why).
	Ended  *GoalRow `json:"ended,omitempty"`
	Chosen *GoalRow `json:"chosen,omitempty"`
	// Crisis is set when the cycle ran in crisis (load ≥ 0.90), with
	// CrisisCycles the consecutive crisis cycles so far; Reset is the
	// number of stressors the crisis reset forced (spec §4: after 3
	// consecutive crisis cycles).
	Crisis       bool `json:"crisis,omitempty"`
	CrisisCycles int  `json:"crisis_cycles,omitempty"`
	Reset        int  `json:"reset,omitempty"`
	// LateMS is how late the heartbeat ran after its scheduled time, in
	// milliseconds (a heartbeat is late when the previous one's cycle
	// took longer than the interval, as with a time.Ticker).
	LateMS int64 `json:"late_ms,omitempty"`
	// LatencyMS is the simulated time the heartbeat's model calls took,
	// waiting for a model slot included, in milliseconds.
	LatencyMS int64 `json:"latency_ms,omitempty"`
	// Calls is the number of model attempts during the heartbeat (the
	// cycle's, and the calls of the goal's pursuit when it started).
	Calls int `json:"calls,omitempty"`
}

// StressorRow is an active stressor in a [Row].
type StressorRow struct {
	Type     string `json:"type"`
	Severity Num    `json:"severity"`
	// Rate is the escalation in severity per day.
	Rate Num `json:"rate"`
	// OnsetSec is the onset in seconds since the start of the run
	// (negative for a stressor older than the run).
	OnsetSec float64 `json:"onset_sec"`
}

// Change is a stressor added or resolved in a [Row].
type Change struct {
	Type  string `json:"type"`
	Cause string `json:"cause"`
}

// GoalRow is a goal chosen or ended in a [Row]. N numbers the agent's
// goals from 1 in the order they were chosen during the run (0 for a goal
// chosen before it). A chosen goal has Goal (its text); an ended one has
// Status (DONE, FAILED or ABANDONED) and Summary (its outcome).
type GoalRow struct {
	N        int    `json:"n"`
	Goal     string `json:"goal,omitempty"`
	Status   string `json:"status,omitempty"`
	Summary  string `json:"summary,omitempty"`
	Fallback bool   `json:"fallback,omitempty"`
	Cause    string `json:"cause,omitempty"`
}

// Num is a float64 that JSON-encodes rounded to 6 decimals, so that
// trajectory files are the same bytes on every platform.
type Num float64

// MarshalJSON implements json.Marshaler.
func (n Num) MarshalJSON() ([]byte, error) {
	v := float64(n)
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil, fmt.Errorf("simulate: cannot encode %v", v)
	}
	v = math.Round(v*1e6) / 1e6
	if v == 0 {
		v = 0 // no "-0"
	}
	return strconv.AppendFloat(nil, v, 'f', -1, 64), nil
}

// rowsOf returns the stressor rows of a state.
func rowsOf(active []suffering.Stressor, start time.Time) []StressorRow {
	out := make([]StressorRow, 0, len(active))
	for _, st := range active {
		out = append(out, StressorRow{Type: st.Type, Severity: Num(st.Severity), Rate: Num(st.RatePerDay), OnsetSec: secs(st.Onset.Sub(start))})
	}
	return out
}

func secs(d time.Duration) float64 { return float64(d.Milliseconds()) / 1000 }

// ReadTrajectory reads a trajectory file written by [Run], plain or
// gzip-compressed (recognised by its magic bytes). Errors name the line
// that is not a [Row].
func ReadTrajectory(r io.Reader) ([]Row, error) {
	br := bufio.NewReaderSize(r, 1<<16)
	if magic, err := br.Peek(2); err == nil && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("simulate: trajectory: %w", err)
		}
		defer zr.Close()
		r = zr
	} else {
		r = br
	}
	var out []Row
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 8*1024*1024)
	for n := 1; sc.Scan(); n++ {
		var row Row
		if err := json.Unmarshal(sc.Bytes(), &row); err != nil {
			return nil, fmt.Errorf("simulate: trajectory line %d: %w", n, err)
		}
		out = append(out, row)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("simulate: trajectory: %w", err)
	}
	return out, nil
}

// Sev is an active stressor's severity and escalation rate, for the
// closed forms below.
type Sev struct {
	Severity   float64
	RatePerDay float64
}

// EscalateStressors returns severities escalated by d in closed form
// (spec §4): each min(1, severity + rate × days). [suffering.State.Escalate]
// computes the same, tick by tick.
func EscalateStressors(s []Sev, d time.Duration) []Sev {
	days := d.Hours() / 24
	out := make([]Sev, len(s))
	for i, x := range s {
		out[i] = Sev{Severity: min(1, x.Severity+x.RatePerDay*days), RatePerDay: x.RatePerDay}
	}
	return out
}

// LoadOf returns the load of severities: their sum, capped at 1.
func LoadOf(s []Sev) float64 { return min(sumOf(s), 1) }

func sumOf(s []Sev) float64 {
	sum := 0.0
	for _, x := range s {
		sum += x.Severity
	}
	return sum
}

// breakpoints returns the offsets in (0, d) at which a stressor of s
// reaches severity 1, sorted.
func breakpoints(s []Sev, d time.Duration) []time.Duration {
	var out []time.Duration
	for _, x := range s {
		if x.RatePerDay <= 0 || x.Severity >= 1 {
			continue
		}
		at := time.Duration((1 - x.Severity) / x.RatePerDay * 24 * float64(time.Hour))
		if at > 0 && at < d {
			out = append(out, at)
		}
	}
	slices.Sort(out)
	return out
}

var thresholds = []float64{suffering.ThresholdProminent, suffering.ThresholdConstrained, suffering.ThresholdDominant, suffering.ThresholdCrisis}

// LevelTimes returns how long the load of s, escalating in closed form,
// spends in each level ([suffering.Level] as index) during the next d. The
// load is piecewise linear and non-decreasing; crossings are solved
// exactly within each piece.
func LevelTimes(s []Sev, d time.Duration) [5]time.Duration {
	var out [5]time.Duration
	if d <= 0 {
		return out
	}
	cuts := append([]time.Duration{0}, breakpoints(s, d)...)
	cuts = append(cuts, d)
	for i := 0; i+1 < len(cuts); i++ {
		a, b := cuts[i], cuts[i+1]
		if b <= a {
			continue
		}
		// Within [a, b] the sum of severities is linear from la to lb;
		// every threshold is below 1, so the load's cap does not matter.
		la, lb := sumOf(EscalateStressors(s, a)), sumOf(EscalateStressors(s, b))
		pos := a
		lvl := suffering.LevelOf(la)
		for _, th := range thresholds[lvl:] {
			if lb+1e-9 < th {
				break
			}
			// Time at which la + (lb−la)·f + 1e-9 reaches th.
			f := 1.0
			if lb > la {
				f = (th - 1e-9 - la) / (lb - la)
			}
			at := a + time.Duration(f*float64(b-a))
			at = min(max(at, pos), b)
			out[lvl] += at - pos
			pos = at
			lvl++
		}
		out[lvl] += b - pos
	}
	return out
}
