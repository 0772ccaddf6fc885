package trio_test

import (
	"testing"

	"github.com/existence-loop/sdk/existence/trio"
	"github.com/existence-loop/sdk/identity"
)

// TestMembers pins the roster: the original's ids and names in order, one
// member per role, valid ids and names, and fresh slices per call.
func TestMembers(t *testing.T) {
	want := []struct{ id, name, role string }{
		{"scout", "Cedar", trio.Scout}, {"analyst", "Cipher", trio.Analyst}, {"builder", "Vault", trio.Builder},
	}
	got := trio.Members()
	if len(got) != len(want) {
		t.Fatalf("Members() has %d members, want %d", len(got), len(want))
	}
	for i, w := range want {
		m := got[i]
		if m.ID != w.id || m.Name != w.name || m.Role != w.role {
			t.Errorf("member %d = %s/%s/%s, want %s/%s/%s", i, m.ID, m.Name, m.Role, w.id, w.name, w.role)
		}
		if err := identity.ValidateID(m.ID); err != nil {
			t.Errorf("member %d: %v", i, err)
		}
		if err := identity.ValidateName(m.Name); err != nil {
			t.Errorf("member %d: %v", i, err)
		}
		if m.Instruction == "" || len(m.Traits) == 0 || len(m.Domains) == 0 {
			t.Errorf("member %s lacks an instruction, traits or domains: %+v", m.Name, m)
		}
	}
	got[0].Traits[0] = "changed"
	if trio.Members()[0].Traits[0] == "changed" {
		t.Error("Members() shares its slices between calls")
	}
}
