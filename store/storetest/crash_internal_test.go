package storetest

import "testing"

func TestRunPattern(t *testing.T) {
	for _, tt := range []struct{ name, want string }{
		{"TestCrash", "^TestCrash$"},
		{"TestStores/sqlite", "^TestStores$/^sqlite$"},
		{"TestA/b.c(1)", `^TestA$/^b\.c\(1\)$`},
	} {
		if got := runPattern(tt.name); got != tt.want {
			t.Errorf("runPattern(%q) = %q, want %q", tt.name, got, tt.want)
		}
	}
}

// TestCrashStateVersions: every version is valid and names itself, and
// two versions in a row differ in each part a store may write on its own
// (the narrative, the last goal, the questions, opinions, discoveries and
// active stressors), so that a save mixing them cannot pass for either.
func TestCrashStateVersions(t *testing.T) {
	for v := 1; v < 40; v++ {
		st := CrashState("scout", v)
		if got, err := crashVersion(st); err != nil || got != v {
			t.Fatalf("crashVersion(CrashState(v=%d)) = %d, %v", v, got, err)
		}
		if err := st.Validate(); err != nil {
			t.Fatalf("CrashState(v=%d) is invalid: %v", v, err)
		}
		prev := CrashState("scout", v-1)
		for part, same := range map[string]bool{
			"narrative":    st.Identity.Narrative == prev.Identity.Narrative,
			"last goal":    st.Identity.Goals[len(st.Identity.Goals)-1].Objective == prev.Identity.Goals[len(prev.Identity.Goals)-1].Objective,
			"question":     st.Identity.Questions[0] == prev.Identity.Questions[0],
			"opinion":      st.Identity.Opinions[0].Text == prev.Identity.Opinions[0].Text,
			"discovery":    st.Identity.Discoveries[0].Text == prev.Identity.Discoveries[0].Text,
			"stressor":     st.Suffering.Active[0].Description == prev.Suffering.Active[0].Description,
			"escalated at": st.Suffering.LastEscalated.Equal(prev.Suffering.LastEscalated),
		} {
			if same {
				t.Errorf("versions %d and %d have the same %s", v-1, v, part)
			}
		}
	}
}
