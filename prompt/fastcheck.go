package prompt

// fastValid reports whether the normalised object m certainly satisfies
// [Schema], by checking the schema's rules directly: the types of the
// properties it declares, the required properties of the root and of each
// list entry, and the enum of "action". It allocates nothing. It is only a
// shortcut for the common case, a well-formed reply: the jsonschema
// validator costs about 20 µs and deepens the worker goroutines' stacks,
// which at 10,000 agents showed as cycle lateness and memory per agent
// (docs/performance.md). When it reports false, [ParseResponse] runs the
// full validator, which decides and names the bad field, so what is
// accepted and every error message stay exactly those of the validator.
//
// The invariant, checked by FuzzFastCheck and TestFastValid, is one way:
// fastValid(m) ⇒ the validator accepts m. The converse need not hold (a
// false here only costs the slow path). Keep it in step with the schema:
// TestFastValidSchemaGolden fails when testdata/schema.golden.json
// changes.
//
// The values are those encoding/json produces when decoding into any:
// string, float64, bool, nil, []any and map[string]any.
func fastValid(m map[string]any) bool {
	// Root: required action (enum ["goal"]), content, reasoning.
	if a, ok := m["action"].(string); !ok || a != "goal" {
		return false
	}
	if !isString(m, "content", true) || !isString(m, "reasoning", true) {
		return false
	}
	// worldview_update: string or null.
	if x, ok := m["worldview_update"]; ok && x != nil {
		if _, ok := x.(string); !ok {
			return false
		}
	}
	// new_open_questions: array of strings.
	if x, ok := m["new_open_questions"]; ok {
		l, ok := x.([]any)
		if !ok {
			return false
		}
		for _, q := range l {
			if _, ok := q.(string); !ok {
				return false
			}
		}
	}
	// new_opinions: array of {opinion, domain} (both required strings).
	if !entries(m, "new_opinions", "opinion", "domain", "") {
		return false
	}
	// suffering_assessment: object with optional new_stressors
	// ({type, description, condition}) and resolved ({type, reason}).
	if x, ok := m["suffering_assessment"]; ok {
		sa, ok := x.(map[string]any)
		if !ok {
			return false
		}
		if !entries(sa, "new_stressors", "type", "description", "condition") ||
			!entries(sa, "resolved", "type", "reason", "") {
			return false
		}
	}
	return true
}

// isString reports whether m[k] is a string, or (when !required) absent.
func isString(m map[string]any, k string, required bool) bool {
	x, ok := m[k]
	if !ok {
		return !required
	}
	_, ok = x.(string)
	return ok
}

// entries reports whether m[k] is absent, or an array of objects each
// holding the required string properties a, b and (when not "") c.
func entries(m map[string]any, k, a, b, c string) bool {
	x, ok := m[k]
	if !ok {
		return true
	}
	l, ok := x.([]any)
	if !ok {
		return false
	}
	for _, e := range l {
		o, ok := e.(map[string]any)
		if !ok || !isString(o, a, true) || !isString(o, b, true) {
			return false
		}
		if c != "" && !isString(o, c, true) {
			return false
		}
	}
	return true
}
