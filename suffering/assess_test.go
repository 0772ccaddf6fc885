package suffering_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/suffering"
)

func TestAssess(t *testing.T) {
	type change struct {
		kind suffering.ChangeKind
		typ  string
	}
	added := func(typ string) change { return change{suffering.Added, typ} }
	resolved := func(typ string) change { return change{suffering.Resolved, typ} }
	tests := []struct {
		name       string
		active     []string // types active before
		obs        suffering.Evidence
		want       []change
		wantActive []string
	}{
		// repeated_failure: ≥4 failed and rate > 50% adds; < 30% with ≥3
		// completions resolves (spec §4).
		{"repeated failure added", nil, suffering.Evidence{Completed: 3, Failed: 4}, []change{added("repeated_failure")}, []string{"repeated_failure"}},
		{"failure rate exactly 50%", nil, suffering.Evidence{Completed: 4, Failed: 4}, nil, nil},
		{"only 3 failures", nil, suffering.Evidence{Failed: 3}, nil, nil},
		{"repeated failure already active", []string{"repeated_failure"}, suffering.Evidence{Failed: 9}, nil, []string{"repeated_failure"}},
		{"repeated failure resolved", []string{"repeated_failure"}, suffering.Evidence{Completed: 3, Failed: 1}, []change{resolved("repeated_failure")}, nil},
		{"rate exactly 30% does not resolve", []string{"repeated_failure"}, suffering.Evidence{Completed: 7, Failed: 3}, nil, []string{"repeated_failure"}},
		{"2 completions do not resolve", []string{"repeated_failure"}, suffering.Evidence{Completed: 2}, nil, []string{"repeated_failure"}},
		{"between 30% and 50% changes nothing", []string{"repeated_failure"}, suffering.Evidence{Completed: 3, Failed: 2}, nil, []string{"repeated_failure"}},

		// futility: stalls beat completions, many unused artifacts.
		{"futility added", nil, suffering.Evidence{Completed: 1, Stalled: 3, Artifacts: 11}, []change{added("futility")}, []string{"futility"}},
		{"10 artifacts are not enough", nil, suffering.Evidence{Completed: 1, Stalled: 3, Artifacts: 10}, nil, nil},
		{"an artifact was used", nil, suffering.Evidence{Completed: 1, Stalled: 3, Artifacts: 11, ArtifactsUsed: 1}, nil, nil},
		{"2 stalls are not enough", nil, suffering.Evidence{Stalled: 2, Artifacts: 11}, nil, nil},
		{"2 completions block futility", nil, suffering.Evidence{Completed: 2, Stalled: 3, Artifacts: 11}, nil, nil},
		{"futility resolved by use", []string{"futility"}, suffering.Evidence{Completed: 4, ArtifactsUsed: 1}, []change{resolved("futility")}, nil},
		{"futility resolved by consistency", []string{"futility"}, suffering.Evidence{Completed: 6}, []change{resolved("futility")}, nil},
		{"futility kept while stalling", []string{"futility"}, suffering.Evidence{Completed: 6, Stalled: 7}, nil, []string{"futility"}},

		// purposelessness: much output, no direction.
		{"purposelessness added", nil, suffering.Evidence{Outputs: 20}, []change{added("purposelessness")}, []string{"purposelessness"}},
		{"19 outputs", nil, suffering.Evidence{Outputs: 19}, nil, nil},
		{"directed output", nil, suffering.Evidence{Outputs: 25, Directed: true}, nil, nil},
		{"purposelessness resolved", []string{"purposelessness"}, suffering.Evidence{Completed: 5, Failed: 2, Outputs: 40}, []change{resolved("purposelessness")}, nil},
		{"purposelessness kept at 37% failures", []string{"purposelessness"}, suffering.Evidence{Completed: 5, Failed: 3}, nil, []string{"purposelessness"}},

		{"all three, in order", nil, suffering.Evidence{Failed: 6, Stalled: 6, Artifacts: 12, Outputs: 30},
			[]change{added("repeated_failure"), added("futility"), added("purposelessness")},
			[]string{"repeated_failure", "futility", "purposelessness"}},
		{"full: nothing added, nothing reported", []string{"a", "b", "c", "d", "e"}, suffering.Evidence{Failed: 6},
			nil, []string{"a", "b", "c", "d", "e"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s suffering.State
			for _, typ := range tt.active {
				add(t, &s, t0, typ, 0)
			}
			now := t0.Add(time.Hour)
			changes := s.Assess(now, tt.obs)
			var got []change
			for _, c := range changes {
				got = append(got, change{c.Kind, c.Stressor.Type})
				if c.Kind == suffering.Resolved {
					assert.Equal(t, now, c.Stressor.ResolvedAt)
					assert.NotEmpty(t, c.Stressor.Resolution)
				} else {
					assert.Equal(t, now, c.Stressor.Onset)
					assert.Equal(t, suffering.InitialSeverity, c.Stressor.Severity)
				}
			}
			assert.Equal(t, tt.want, got)
			var active []string
			for _, st := range s.Active {
				active = append(active, st.Type)
			}
			assert.Equal(t, tt.wantActive, active)
		})
	}
}

func TestAssessTexts(t *testing.T) {
	var s suffering.State
	ch := s.Assess(t0, suffering.Evidence{Completed: 3, Failed: 4})
	require.Len(t, ch, 1)
	st := ch[0].Stressor
	assert.Equal(t, "bring the failure rate below 30% by completing goals successfully", st.Condition)
	assert.Equal(t, "4 of 7 recent goals failed or were abandoned (57% failure rate). The pattern is not yet understood.", st.Description)
	assert.Equal(t, 0.040, st.RatePerDay)

	ch = s.Assess(t0, suffering.Evidence{Completed: 3, Failed: 1})
	require.Len(t, ch, 1)
	assert.Equal(t, "failure rate dropped to 25% with 3 completions", ch[0].Stressor.Resolution)
	require.Len(t, s.Resolved, 1)
	assert.Equal(t, "failure rate dropped to 25% with 3 completions", s.Resolved[0].Resolution)

	ch = s.Assess(t0, suffering.Evidence{Completed: 1, Stalled: 3, Artifacts: 11, Outputs: 20})
	require.Len(t, ch, 2)
	assert.Equal(t, suffering.FutilityCondition, ch[0].Stressor.Condition)
	assert.Equal(t, "Goals are stalling (3 abandoned) more than completing (1 done). 11 artifacts produced but none has been used — work is not having observable effect.", ch[0].Stressor.Description)
	assert.Equal(t, suffering.PurposelessCondition, ch[1].Stressor.Condition)
	assert.Equal(t, "20 outputs recently and no clear direction. It's unclear what problem this is solving or who it's for.", ch[1].Stressor.Description)
}

func TestAssessNeverExceedsMaxActive(t *testing.T) {
	var s suffering.State
	for i := range 4 {
		add(t, &s, t0, fmt.Sprintf("t%d", i), 0)
	}
	ch := s.Assess(t0, suffering.Evidence{Failed: 6, Stalled: 6, Artifacts: 12, Outputs: 30})
	require.Len(t, ch, 1, "only one slot was free")
	assert.Equal(t, "repeated_failure", ch[0].Stressor.Type)
	assert.Len(t, s.Active, suffering.MaxActive)
	require.NoError(t, s.Validate())
}
