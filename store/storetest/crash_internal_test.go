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

// TestCrashStateVersions: every version names itself, and two versions
// differ in every list, so that a mixed save cannot pass for either.
func TestCrashStateVersions(t *testing.T) {
	for v := 1; v < 40; v++ {
		st := CrashState("scout", v)
		if got, err := crashVersion(st); err != nil || got != v {
			t.Fatalf("crashVersion(CrashState(v=%d)) = %d, %v", v, got, err)
		}
		if err := st.Validate(); err != nil {
			t.Fatalf("CrashState(v=%d) is invalid: %v", v, err)
		}
	}
}
