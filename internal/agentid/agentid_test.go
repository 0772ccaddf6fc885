package agentid

import (
	"errors"
	"strings"
	"testing"
)

func TestValidate(t *testing.T) {
	for id, ok := range map[string]bool{
		"scout": true, "agent-00042": true, "a_b": true, "0": true, strings.Repeat("a", 64): true,
		"": false, "A": false, "-a": false, "_a": false, "../x": false, "a/b": false, "x\x00": false,
		"..": false, strings.Repeat("a", 65): false, "é": false,
	} {
		err := Validate(id)
		if (err == nil) != ok {
			t.Errorf("Validate(%q) = %v, want ok=%v", id, err, ok)
		}
		if err != nil && !errors.Is(err, ErrInvalid) {
			t.Errorf("Validate(%q) = %v, does not match ErrInvalid", id, err)
		}
	}
}
