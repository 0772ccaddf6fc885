package memory_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/memory"
)

// TestValidateAgentIDIsIdentityRule pins that memory checks agent ids by
// the module's one rule: the same verdicts and wording as
// identity.ValidateID, and errors matching both memory.ErrInvalid and
// identity.ErrInvalidID.
func TestValidateAgentIDIsIdentityRule(t *testing.T) {
	for _, id := range []string{"scout", "agent-00042", "0", strings.Repeat("a", 64),
		"", "A", "-a", "_a", "../x", "a/b", "x\x00", strings.Repeat("a", 65), "é"} {
		got, want := memory.ValidateAgentID(id), identity.ValidateID(id)
		if (got == nil) != (want == nil) {
			t.Errorf("ValidateAgentID(%q) = %v, identity.ValidateID = %v", id, got, want)
			continue
		}
		if got == nil {
			continue
		}
		if !errors.Is(got, memory.ErrInvalid) || !errors.Is(got, identity.ErrInvalidID) {
			t.Errorf("ValidateAgentID(%q) = %v, want it to match memory.ErrInvalid and identity.ErrInvalidID", id, got)
		}
		if !strings.HasSuffix(got.Error(), want.Error()) {
			t.Errorf("ValidateAgentID(%q) = %q, want the wording of identity.ValidateID %q", id, got, want)
		}
	}
}
