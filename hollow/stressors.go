package hollow

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/existence-loop/sdk/suffering"
)

// unspecifiedType is the type given to a stressor whose type is missing.
const unspecifiedType = "unspecified"

// stressorCounts reports what the suffering conversion had to change.
type stressorCounts struct {
	demoted, merged int
	trimmed         []string
}

// activeEntry is an active stressor with the type as the file spelled it.
type activeEntry struct {
	st      suffering.Stressor
	rawType string
}

// suffering converts identity/{id}/suffering.json into a state that passes
// [suffering.State.Validate]: types normalised, severities clamped,
// duplicate active types merged (the most severe stays active), at most
// [suffering.MaxActive] active (the most severe), and the resolved history
// capped at [suffering.MaxResolved] (newest kept). Stressors taken out of
// the active list are appended to the resolved history with a note saying
// why, resolved at the import instant. Only a document that is not a JSON
// object is an error.
func (d *decoder) suffering(data []byte, where string) (suffering.State, stressorCounts, error) {
	var counts stressorCounts
	o, err := d.parseObject(data, where)
	if err != nil {
		return suffering.State{}, counts, err
	}

	var active []activeEntry
	var resolved, markedResolved []suffering.Stressor
	for i, raw := range o.list("active_stressors") {
		e, ok := o.child(raw, fmt.Sprintf("%s: active_stressors[%d]", where, i))
		if !ok {
			continue
		}
		st, rawType := d.stressor(e)
		if e.flag("resolved") {
			d.warn("%s: marked resolved; moved to the resolved history", e.where)
			d.resolution(e, &st)
			markedResolved = append(markedResolved, st)
			continue
		}
		active = append(active, activeEntry{st, rawType})
	}
	for i, raw := range o.list("resolved_history") {
		e, ok := o.child(raw, fmt.Sprintf("%s: resolved_history[%d]", where, i))
		if !ok {
			continue
		}
		st, _ := d.stressor(e)
		d.resolution(e, &st)
		resolved = append(resolved, st)
	}
	resolved = append(resolved, markedResolved...)

	// Merge active stressors whose types are equal after normalisation.
	var kept []activeEntry
	at := map[string]int{}
	for _, e := range active {
		j, dup := at[e.st.Type]
		if !dup {
			at[e.st.Type] = len(kept)
			kept = append(kept, e)
			continue
		}
		loser := e
		if e.st.Severity > kept[j].st.Severity {
			loser, kept[j] = kept[j], e
		}
		loser.st.ResolvedAt = d.now
		loser.st.Resolution = fmt.Sprintf("merged on import from hollow-agentOS: %q and another active stressor both normalise to %q; kept the more severe one active", loser.rawType, loser.st.Type)
		resolved = append(resolved, loser.st)
		counts.merged++
	}

	// Keep the MaxActive most severe active.
	if n := len(kept); n > suffering.MaxActive {
		bySeverity := slices.Clone(kept)
		slices.SortStableFunc(bySeverity, func(a, b activeEntry) int { return cmp.Compare(b.st.Severity, a.st.Severity) })
		demoted := bySeverity[suffering.MaxActive:]
		kept = bySeverity[:suffering.MaxActive]
		slices.SortStableFunc(demoted, func(a, b activeEntry) int { return a.st.Onset.Compare(b.st.Onset) })
		note := fmt.Sprintf("demoted on import from hollow-agentOS: more than %d active stressors (%d); kept the %d most severe", suffering.MaxActive, n, suffering.MaxActive)
		for _, e := range demoted {
			e.st.ResolvedAt, e.st.Resolution = d.now, note
			resolved = append(resolved, e.st)
		}
		counts.demoted = len(demoted)
	}
	slices.SortStableFunc(kept, func(a, b activeEntry) int { return a.st.Onset.Compare(b.st.Onset) })

	if n := len(resolved); n > suffering.MaxResolved {
		resolved = slices.Clone(resolved[n-suffering.MaxResolved:])
		counts.trimmed = append(counts.trimmed, fmt.Sprintf("resolved stressors: %d → %d", n, suffering.MaxResolved))
	}

	s := suffering.State{Resolved: resolved}
	for _, e := range kept {
		s.Active = append(s.Active, e.st)
	}
	if t, ok := o.timestamp("last_escalated"); ok {
		s.LastEscalated = t
	} else {
		if !o.has("last_escalated") {
			d.warn("%s: no last_escalated; escalation counts from the import time", where)
		}
		s.LastEscalated = d.now
	}
	return s, counts, nil
}

// stressor converts one stressor object. It returns the stressor and its
// type as the file spelled it.
func (d *decoder) stressor(e object) (suffering.Stressor, string) {
	rawType := e.str("type")
	st := suffering.Stressor{
		Type:        suffering.Normalize(rawType),
		Description: e.str("description"),
		Condition:   e.str("observable_condition"),
	}
	if st.Type == "" {
		d.warn("%s: no type; imported as %q", e.where, unspecifiedType)
		st.Type = unspecifiedType
	}
	if st.Condition == "" && e.has("condition") {
		st.Condition = e.str("condition")
	}

	if v, ok := e.num("severity"); ok {
		st.Severity = d.unit(e.where, "severity", v, suffering.InitialSeverity)
	} else {
		d.warn("%s: no severity; set to %.2f", e.where, suffering.InitialSeverity)
		st.Severity = suffering.InitialSeverity
	}
	st.Peak = st.Severity
	if v, ok := e.num("peak_severity"); ok {
		st.Peak = max(st.Severity, d.unit(e.where, "peak_severity", v, st.Severity))
	}
	st.RatePerDay = suffering.Rate(st.Type)
	if v, ok := e.num("escalation_per_day"); ok {
		if math.IsNaN(v) || v < 0 || v > 1 {
			d.warn("%s: escalation_per_day %v outside 0–1; set to %.3f, the rate of its type", e.where, v, st.RatePerDay)
		} else {
			st.RatePerDay = v
		}
	}
	if t, ok := e.timestamp("onset"); ok {
		st.Onset = t
	} else {
		if !e.has("onset") {
			d.warn("%s: no onset; set to the import time", e.where)
		}
		st.Onset = d.now
	}
	return st, rawType
}

// resolution sets the resolution time and note of a stressor from the
// history (resolved_at, resolution_note).
func (d *decoder) resolution(e object, st *suffering.Stressor) {
	st.Resolution = e.str("resolution_note")
	if t, ok := e.timestamp("resolved_at"); ok {
		st.ResolvedAt = t
		return
	}
	if !e.has("resolved_at") {
		d.warn("%s: no resolved_at; set to the import time", e.where)
	}
	st.ResolvedAt = d.now
}

// unit clamps a severity to 0–1 with a warning; NaN becomes nan.
func (d *decoder) unit(where, field string, v, nan float64) float64 {
	switch {
	case math.IsNaN(v):
		d.warn("%s: %s is NaN; set to %.2f", where, field, nan)
		return nan
	case v < 0:
		d.warn("%s: %s %v below 0; clamped to 0", where, field, v)
		return 0
	case v > 1:
		d.warn("%s: %s %v above 1; clamped to 1", where, field, v)
		return 1
	}
	return v
}
