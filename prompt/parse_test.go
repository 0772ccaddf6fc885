package prompt_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/prompt"
)

// The goals of the corpus (testdata/responses): Cedar (scout), Cipher
// (analyst) and Vault (builder) picking their next goal.
const (
	parseGoalCedar   = "Read /agentOS/agents/existence.py and write a summary of how the heartbeat picks the next agent to /agentOS/workspace/heartbeat_notes.md"
	parseGoalCipher  = "Compare the last 20 entries of /agentOS/workspace/goal_log.jsonl against the status tags and write the mismatch rate to /agentOS/workspace/analysis/goal_audit.md"
	parseGoalVault   = "Synthesize a diff_files capability that returns a unified diff of two workspace files"
	parseGoalSpec    = "Write a design spec for a shared scratchpad to /agentOS/design/scratchpad.md, then call invoke_claude() with it"
	parseGoalEval    = "Call self_evaluate() with the evidence path /agentOS/workspace/heartbeat_notes.md"
	parseGoalStatus  = "Check the status of my pending invoke_claude() request for the scratchpad spec with check_claude_status()"
	parseGoalUnicode = "Write “what I actually know” — a 600-character worldview draft — to /agentOS/workspace/weltbild_ü.md ✍️ 日本語のメモも"
	parseGoalBraces  = `Fix the template in /agentOS/tools/dynamic/render.py so that {name} and {{literal}} braces survive, and "quoted" paths like C:\tmp work`
	parseGoalTools   = "Read /agentOS/tools/dynamic/ and list the tools nobody has called"
)

// responseCase is the classified result expected for one corpus file: either
// the goal text (Content) or an error kind with its JSON Pointer.
type responseCase struct {
	goal    string
	kind    error
	pointer string
	// noReasoning: the response parses with an empty Reasoning.
	noReasoning bool
}

var responseCorpus = map[string]responseCase{
	// Well-formed.
	"typical.txt":           {goal: parseGoalCipher},
	"worldview_null.txt":    {goal: parseGoalTools},
	"extra_keys.txt":        {goal: parseGoalCedar}, // unknown keys are accepted (no additionalProperties: false)
	"unicode.txt":           {goal: parseGoalUnicode},
	"braces_in_strings.txt": {goal: parseGoalBraces},
	"bom.txt":               {goal: parseGoalCedar},

	// qwen3-style reasoning.
	"think_closed.txt":              {goal: parseGoalCedar},
	"think_stray_close.txt":         {goal: parseGoalVault}, // reasoning, then </think> (template opened the block)
	"think_leading_stray_close.txt": {goal: parseGoalVault},
	"think_unclosed.txt":            {goal: parseGoalCipher},
	"think_with_draft.txt":          {goal: parseGoalCedar}, // the draft inside <think> is ignored
	"think_only.txt":                {kind: prompt.ErrNoJSON},

	// Wrappers.
	"thought_wrapper.txt":           {goal: parseGoalCedar},
	"thinking_response_wrapper.txt": {goal: parseGoalVault},
	"response_string_wrapper.txt":   {goal: parseGoalVault},
	"thought_only.txt":              {kind: prompt.ErrSchema, pointer: ""}, // missing "content", "reasoning"
	"array_wrapped.txt":             {goal: parseGoalVault},

	// Several objects.
	"two_objects.txt":               {goal: parseGoalCedar},
	"two_objects_first_invalid.txt": {goal: parseGoalCipher},

	// Truncation and whitespace floods (done_reason "length").
	"missing_closing_brace.txt":     {goal: parseGoalVault},
	"missing_brace_and_bracket.txt": {goal: parseGoalSpec},
	"truncated_in_string.txt":       {kind: prompt.ErrSyntax},
	"flood_after_object.txt":        {goal: parseGoalCedar},
	"flood_after_comma.txt":         {goal: parseGoalEval},
	"flood_inside_object.txt":       {kind: prompt.ErrSyntax},

	// Prose and fences (format ignored when think is off).
	"prose_fenced.txt":         {goal: parseGoalVault},
	"fenced_missing_brace.txt": {goal: parseGoalCedar},
	"prose_braces_first.txt":   {goal: parseGoalCedar},

	// Normalisation (spec §3).
	"action_act.txt":                  {goal: parseGoalCipher},
	"action_explore.txt":              {goal: parseGoalCedar},
	"action_missing.txt":              {goal: parseGoalVault},
	"content_empty.txt":               {goal: parseGoalStatus},
	"content_and_reasoning_empty.txt": {kind: prompt.ErrEmptyGoal, pointer: "/content"},

	// Leniency of the original's dict.get (parse step 7).
	"reasoning_missing.txt":   {goal: parseGoalCedar, noReasoning: true},
	"reasoning_null.txt":      {goal: parseGoalTools, noReasoning: true},
	"optional_nulls.txt":      {goal: parseGoalTools},
	"suffering_null.txt":      {goal: parseGoalEval},
	"opinions_as_strings.txt": {goal: parseGoalVault}, // bare strings become opinions without a domain
	"missing_domain.txt":      {goal: parseGoalVault},
	"partial_entries.txt":     {goal: parseGoalCipher},

	// Wrong types and missing fields.
	"worldview_number.txt":      {kind: prompt.ErrSchema, pointer: "/worldview_update"},
	"opinion_missing_text.txt":  {kind: prompt.ErrSchema, pointer: "/new_opinions/0/opinion"},
	"stressor_missing_type.txt": {kind: prompt.ErrSchema, pointer: "/suffering_assessment/new_stressors/0/type"},

	// A key named twice: the whole reply is refused, whichever value a
	// reader would take, and no other object in it is tried.
	"duplicate_content.txt":           {kind: prompt.ErrDuplicateKey, pointer: "/content"},
	"duplicate_nested.txt":            {kind: prompt.ErrDuplicateKey, pointer: "/new_opinions/0/domain"},
	"duplicate_then_valid.txt":        {kind: prompt.ErrDuplicateKey, pointer: "/content"},
	"duplicate_in_string_wrapper.txt": {kind: prompt.ErrDuplicateKey, pointer: "/content"},

	// Not a response at all.
	"garbage.txt":        {kind: prompt.ErrNoJSON},
	"garbage_braces.txt": {kind: prompt.ErrSyntax},
	"empty.txt":          {kind: prompt.ErrNoJSON},
}

var parseSentinels = []error{prompt.ErrTooLarge, prompt.ErrNoJSON, prompt.ErrSyntax, prompt.ErrSchema, prompt.ErrEmptyGoal, prompt.ErrDuplicateKey}

func readResponseCorpus(t testing.TB) map[string]string {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join("testdata", "responses", "*"))
	require.NoError(t, err)
	require.NotEmpty(t, paths)
	out := make(map[string]string, len(paths))
	for _, p := range paths {
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		out[filepath.Base(p)] = string(b)
	}
	return out
}

func TestParseResponseCorpus(t *testing.T) {
	files := readResponseCorpus(t)
	for name := range responseCorpus {
		assert.Contains(t, files, name, "corpus table names a missing file")
	}
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			want, ok := responseCorpus[name]
			require.True(t, ok, "testdata/responses/%s has no expected result in the corpus table", name)
			got, err := prompt.ParseResponse(files[name])
			if want.kind == nil {
				require.NoError(t, err)
				assert.Equal(t, "goal", got.Action)
				assert.Equal(t, want.goal, got.Content)
				if want.noReasoning {
					assert.Empty(t, got.Reasoning)
				} else {
					assert.NotEmpty(t, got.Reasoning)
				}
				return
			}
			require.Error(t, err)
			assert.Nil(t, got)
			assert.ErrorIs(t, err, want.kind)
			var pe *prompt.ParseError
			require.ErrorAs(t, err, &pe)
			assert.Equal(t, want.pointer, pe.Pointer, "error: %v", err)
		})
	}
}

func TestParseResponseFields(t *testing.T) {
	files := readResponseCorpus(t)

	got, err := prompt.ParseResponse(files["typical.txt"])
	require.NoError(t, err)
	wv := "My DONE tags are less reliable than I assumed."
	assert.Equal(t, &prompt.Response{
		Action:           "goal",
		Content:          parseGoalCipher,
		Reasoning:        "I claimed two goals DONE without evidence paths; measuring that is more honest than another opinion.",
		WorldviewUpdate:  &wv,
		NewOpenQuestions: []string{"How many of my DONE goals left an artifact?"},
		NewOpinions:      []prompt.NewOpinion{{Opinion: "A status tag without an evidence path is a guess.", Domain: "self-evaluation"}},
		SufferingAssessment: &prompt.SufferingAssessment{
			NewStressors: []prompt.NewStressor{{
				Type:        "purposelessness",
				Description: "goals end without artifacts",
				Condition:   "three consecutive goals leave a file in /agentOS/workspace/",
			}},
			Resolved: []prompt.Resolution{{Type: "repeated_failure", Reason: "the last two reads completed"}},
		},
	}, got)

	// Unicode and em dashes survive byte for byte, escaped or not.
	got, err = prompt.ParseResponse(files["unicode.txt"])
	require.NoError(t, err)
	assert.Equal(t, parseGoalUnicode, got.Content)
	assert.Equal(t, "My worldview is borrowed phrasing; rewriting it in my own words — even badly — is the honest step. — Cipher", got.Reasoning)
	require.NotNil(t, got.WorldviewUpdate)
	assert.Equal(t, "Less certainty, more evidence — 証拠.", *got.WorldviewUpdate)

	// null worldview_update is "no change".
	got, err = prompt.ParseResponse(files["worldview_null.txt"])
	require.NoError(t, err)
	assert.Nil(t, got.WorldviewUpdate)

	// A repaired object keeps the fields it had.
	got, err = prompt.ParseResponse(files["missing_brace_and_bracket.txt"])
	require.NoError(t, err)
	assert.Equal(t, []string{"Why does Vault keep abandoning the same spec?"}, got.NewOpenQuestions)

	// Reasoning is kept when content falls back to it.
	got, err = prompt.ParseResponse(files["content_empty.txt"])
	require.NoError(t, err)
	assert.Equal(t, parseGoalStatus, got.Reasoning)
}

// TestParseResponseLenientFields checks what the leniency of parse step 7
// turns the corpus's incomplete responses into.
func TestParseResponseLenientFields(t *testing.T) {
	files := readResponseCorpus(t)
	parse := func(name string) *prompt.Response {
		t.Helper()
		got, err := prompt.ParseResponse(files[name])
		require.NoError(t, err, name)
		return got
	}

	got := parse("opinions_as_strings.txt")
	assert.Equal(t, []prompt.NewOpinion{
		{Opinion: "A capability without a test is a rumour.", Domain: ""},
		{Opinion: "Small tools compound.", Domain: ""},
	}, got.NewOpinions)

	got = parse("missing_domain.txt")
	assert.Equal(t, []prompt.NewOpinion{{Opinion: "A capability without a test is a rumour."}}, got.NewOpinions)

	got = parse("partial_entries.txt")
	assert.Equal(t, []prompt.NewOpinion{
		{Opinion: "A status tag without an evidence path is a guess."},
		{Opinion: "Audits beat opinions."},
	}, got.NewOpinions)
	assert.Equal(t, &prompt.SufferingAssessment{
		NewStressors: []prompt.NewStressor{
			{Type: "purposelessness", Description: "goals end without artifacts"},
			{Type: "invisibility", Condition: "a peer cites my audit"},
		},
		Resolved: []prompt.Resolution{{Type: "repeated_failure"}},
	}, got.SufferingAssessment)

	got = parse("optional_nulls.txt")
	assert.Nil(t, got.WorldviewUpdate)
	assert.Nil(t, got.NewOpenQuestions)
	assert.Nil(t, got.NewOpinions)
	assert.Equal(t, &prompt.SufferingAssessment{}, got.SufferingAssessment)

	got = parse("suffering_null.txt")
	assert.Nil(t, got.SufferingAssessment)
	assert.Nil(t, got.NewOpinions)

	got = parse("reasoning_missing.txt")
	assert.Equal(t, "", got.Reasoning)
	assert.Equal(t, []string{"Does the heartbeat ever skip an agent?"}, got.NewOpenQuestions)
}

func TestParseResponseErrorText(t *testing.T) {
	files := readResponseCorpus(t)
	tests := []struct {
		file string
		want string
	}{
		{"opinion_missing_text.txt", `prompt: response invalid at /new_opinions/0/opinion: missing property "opinion"`},
		{"stressor_missing_type.txt", `prompt: response invalid at /suffering_assessment/new_stressors/0/type: missing property "type"`},
		{"worldview_number.txt", "prompt: response invalid at /worldview_update: expected string or null, but got number"},
		{"thought_only.txt", `prompt: response invalid: missing properties "content", "reasoning"`},
		{"content_and_reasoning_empty.txt", "prompt: response has no goal at /content: content and reasoning are both empty"},
		{"truncated_in_string.txt", "prompt: response is not valid JSON at byte 101: unexpected end of input inside a string"},
		{"flood_inside_object.txt", "prompt: response is not valid JSON at byte 18428: unexpected end of JSON input"},
		{"empty.txt", "prompt: no JSON object in response: empty output"},
		{"garbage.txt", "prompt: no JSON object in response"},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			_, err := prompt.ParseResponse(files[tt.file])
			require.Error(t, err)
			assert.Equal(t, tt.want, err.Error())
		})
	}

	// Several errors: the first in document order, and how many more.
	_, err := prompt.ParseResponse(`{"content": "a", "reasoning": "b", "new_opinions": [1, {"domain": "d"}]}`)
	require.Error(t, err)
	assert.Equal(t, "prompt: response invalid at /new_opinions/0: expected object, but got number (and 1 more error)", err.Error())
}

func TestParseResponseSyntaxOffset(t *testing.T) {
	tests := []struct {
		name   string
		raw    string
		offset int
	}{
		// The offset counts from the start of the raw input, prose included.
		{"bad byte", `Answer: {"action": "goal", "content": x}`, len(`Answer: {"action": "goal", "content": `)},
		{"cut in string", `{"content": "half`, len(`{"content": "half`)},
		{"cut after colon", `<think>hm</think>{"content": `, len(`<think>hm</think>{"content": `)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := prompt.ParseResponse(tt.raw)
			var pe *prompt.ParseError
			require.ErrorAs(t, err, &pe)
			assert.Equal(t, prompt.ErrSyntax, pe.Kind)
			assert.Equal(t, tt.offset, pe.Offset)
			assert.Empty(t, pe.Pointer)
		})
	}
}

func TestParseResponseSize(t *testing.T) {
	valid := `{"action":"goal","content":"` + parseGoalVault + `","reasoning":"the registry has a gap"}`

	// Exactly MaxResponseBytes is accepted (a valid object, then a flood).
	atLimit := valid + strings.Repeat("\n", prompt.MaxResponseBytes-len(valid))
	require.Len(t, atLimit, prompt.MaxResponseBytes)
	got, err := prompt.ParseResponse(atLimit)
	require.NoError(t, err)
	assert.Equal(t, parseGoalVault, got.Content)

	for _, n := range []int{prompt.MaxResponseBytes + 1, 2 << 20} {
		raw := valid + strings.Repeat(" ", n-len(valid)) // a 2 MiB runaway generation
		got, err := prompt.ParseResponse(raw)
		assert.Nil(t, got)
		require.ErrorIs(t, err, prompt.ErrTooLarge)
		var pe *prompt.ParseError
		require.ErrorAs(t, err, &pe)
		assert.Equal(t, -1, pe.Offset)
		assert.Contains(t, pe.Error(), "limit 1048576")
	}
}

func TestParseResponseNormalisation(t *testing.T) {
	tests := []struct {
		name      string
		raw       string
		content   string
		reasoning string
		kind      error
		pointer   string
	}{
		{"action number", `{"action": 7, "content": "a", "reasoning": "b"}`, "a", "b", nil, ""},
		{"action null", `{"action": null, "content": "a", "reasoning": "b"}`, "a", "b", nil, ""},
		{"content null", `{"action": "goal", "content": null, "reasoning": "b"}`, "b", "b", nil, ""},
		{"content missing", `{"action": "goal", "reasoning": "b"}`, "b", "b", nil, ""},
		{"trimmed", "{\"content\": \"  a\\n\", \"reasoning\": \"\\tb \"}", "a", "b", nil, ""},
		{"blank content", `{"content": " \t", "reasoning": "  b  "}`, "b", "b", nil, ""},
		{"both blank", `{"content": " ", "reasoning": "\n"}`, "", "", prompt.ErrEmptyGoal, "/content"},
		{"content blank reasoning missing", `{"content": ""}`, "", "", prompt.ErrEmptyGoal, "/content"},
		{"content blank reasoning null", `{"content": " ", "reasoning": null}`, "", "", prompt.ErrEmptyGoal, "/content"},
		{"content null reasoning null", `{"content": null, "reasoning": null}`, "", "", prompt.ErrEmptyGoal, "/content"},
		{"content wrong type", `{"content": 42, "reasoning": "b"}`, "", "", prompt.ErrSchema, "/content"},
		{"content wrong type reasoning missing", `{"content": 42}`, "", "", prompt.ErrSchema, "/content"},
		{"reasoning wrong type", `{"content": "a", "reasoning": ["b"]}`, "", "", prompt.ErrSchema, "/reasoning"},
		{"empty object", `{}`, "", "", prompt.ErrSchema, ""},
		{"action only", `{"action": "goal", "new_opinions": null}`, "", "", prompt.ErrSchema, ""},
		{"resolved wrong type", `{"content": "a", "reasoning": "b", "suffering_assessment": {"resolved": "all of them"}}`, "", "", prompt.ErrSchema, "/suffering_assessment/resolved"},
		{"questions not strings", `{"content": "a", "reasoning": "b", "new_open_questions": ["ok", 3]}`, "", "", prompt.ErrSchema, "/new_open_questions/1"},

		// Leniency (parse step 7); these were schema errors before.
		{"reasoning missing", `{"action": "goal", "content": "a"}`, "a", "", nil, ""},
		{"reasoning null", `{"content": "a", "reasoning": null}`, "a", "", nil, ""},
		{"stressor missing condition", `{"content": "a", "reasoning": "b", "suffering_assessment": {"new_stressors": [{"type": "futility", "description": "d"}]}}`, "a", "b", nil, ""},

		// What stays an error: an entry without its key field, a null entry,
		// a wrong type.
		{"opinion missing text", `{"content": "a", "reasoning": "b", "new_opinions": [{"domain": "d"}]}`, "", "", prompt.ErrSchema, "/new_opinions/0/opinion"},
		{"opinion text null", `{"content": "a", "reasoning": "b", "new_opinions": [{"opinion": null, "domain": "d"}]}`, "", "", prompt.ErrSchema, "/new_opinions/0/opinion"},
		{"opinion entry null", `{"content": "a", "reasoning": "b", "new_opinions": [null]}`, "", "", prompt.ErrSchema, "/new_opinions/0"},
		{"opinion entry number", `{"content": "a", "reasoning": "b", "new_opinions": [7]}`, "", "", prompt.ErrSchema, "/new_opinions/0"},
		{"opinion domain number", `{"content": "a", "reasoning": "b", "new_opinions": [{"opinion": "o", "domain": 7}]}`, "", "", prompt.ErrSchema, "/new_opinions/0/domain"},
		{"stressor missing type", `{"content": "a", "reasoning": "b", "suffering_assessment": {"new_stressors": [{"description": "d", "condition": "c"}]}}`, "", "", prompt.ErrSchema, "/suffering_assessment/new_stressors/0/type"},
		{"stressor type null", `{"content": "a", "reasoning": "b", "suffering_assessment": {"new_stressors": [{"type": null}]}}`, "", "", prompt.ErrSchema, "/suffering_assessment/new_stressors/0/type"},
		{"resolved missing type", `{"content": "a", "reasoning": "b", "suffering_assessment": {"resolved": [{"reason": "r"}]}}`, "", "", prompt.ErrSchema, "/suffering_assessment/resolved/0/type"},
		{"question null", `{"content": "a", "reasoning": "b", "new_open_questions": [null]}`, "", "", prompt.ErrSchema, "/new_open_questions/0"},
		{"suffering assessment a string", `{"content": "a", "reasoning": "b", "suffering_assessment": "fine"}`, "", "", prompt.ErrSchema, "/suffering_assessment"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := prompt.ParseResponse(tt.raw)
			if tt.kind == nil {
				require.NoError(t, err)
				assert.Equal(t, "goal", got.Action)
				assert.Equal(t, tt.content, got.Content)
				assert.Equal(t, tt.reasoning, got.Reasoning)
				return
			}
			require.ErrorIs(t, err, tt.kind)
			var pe *prompt.ParseError
			require.ErrorAs(t, err, &pe)
			assert.Equal(t, tt.pointer, pe.Pointer, "error: %v", err)
		})
	}
}

// TestParseResponseLenient checks each leniency of parse step 7 on its own:
// what the original system's dict.get accepted is accepted.
func TestParseResponseLenient(t *testing.T) {
	const head = `{"content": "a", "reasoning": "b", `
	tests := []struct {
		name string
		raw  string
		want prompt.Response
	}{
		{"worldview null", head + `"worldview_update": null}`, prompt.Response{}},
		{"questions null", head + `"new_open_questions": null}`, prompt.Response{}},
		{"opinions null", head + `"new_opinions": null}`, prompt.Response{}},
		{"assessment null", head + `"suffering_assessment": null}`, prompt.Response{}},
		{"stressors null", head + `"suffering_assessment": {"new_stressors": null, "resolved": [{"type": "t", "reason": "r"}]}}`,
			prompt.Response{SufferingAssessment: &prompt.SufferingAssessment{Resolved: []prompt.Resolution{{Type: "t", Reason: "r"}}}}},
		{"resolved null", head + `"suffering_assessment": {"new_stressors": [{"type": "t", "description": "d", "condition": "c"}], "resolved": null}}`,
			prompt.Response{SufferingAssessment: &prompt.SufferingAssessment{NewStressors: []prompt.NewStressor{{Type: "t", Description: "d", Condition: "c"}}}}},
		{"opinion as a string", head + `"new_opinions": ["Fewer, better tools.", {"opinion": "o", "domain": "d"}]}`,
			prompt.Response{NewOpinions: []prompt.NewOpinion{{Opinion: "Fewer, better tools."}, {Opinion: "o", Domain: "d"}}}},
		{"opinion as an empty string", head + `"new_opinions": [""]}`,
			prompt.Response{NewOpinions: []prompt.NewOpinion{{}}}},
		{"opinion domain missing", head + `"new_opinions": [{"opinion": "o"}]}`,
			prompt.Response{NewOpinions: []prompt.NewOpinion{{Opinion: "o"}}}},
		{"opinion domain null", head + `"new_opinions": [{"opinion": "o", "domain": null}]}`,
			prompt.Response{NewOpinions: []prompt.NewOpinion{{Opinion: "o"}}}},
		{"stressor description and condition missing", head + `"suffering_assessment": {"new_stressors": [{"type": "t"}]}}`,
			prompt.Response{SufferingAssessment: &prompt.SufferingAssessment{NewStressors: []prompt.NewStressor{{Type: "t"}}}}},
		{"stressor description and condition null", head + `"suffering_assessment": {"new_stressors": [{"type": "t", "description": null, "condition": null}]}}`,
			prompt.Response{SufferingAssessment: &prompt.SufferingAssessment{NewStressors: []prompt.NewStressor{{Type: "t"}}}}},
		{"resolved reason missing", head + `"suffering_assessment": {"resolved": [{"type": "t"}]}}`,
			prompt.Response{SufferingAssessment: &prompt.SufferingAssessment{Resolved: []prompt.Resolution{{Type: "t"}}}}},
		{"resolved reason null", head + `"suffering_assessment": {"resolved": [{"type": "t", "reason": null}]}}`,
			prompt.Response{SufferingAssessment: &prompt.SufferingAssessment{Resolved: []prompt.Resolution{{Type: "t"}}}}},
		{"inside a wrapper", `{"thought": {"content": "a", "reasoning": "b", "new_opinions": ["x"], "suffering_assessment": null}}`,
			prompt.Response{NewOpinions: []prompt.NewOpinion{{Opinion: "x"}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := prompt.ParseResponse(tt.raw)
			require.NoError(t, err)
			want := tt.want
			want.Action, want.Content, want.Reasoning = "goal", "a", "b"
			assert.Equal(t, &want, got)
		})
	}
}

func TestParseResponseExtraction(t *testing.T) {
	tests := []struct {
		name string
		raw  string
		goal string
		kind error
	}{
		{"json in string of wrapper", `{"output": "{\"content\": \"a\", \"reasoning\": \"b\"}"}`, "a", nil},
		{"nested wrappers", `{"json": {"response": {"answer": {"content": "a", "reasoning": "b"}}}}`, "a", nil},
		{"too deeply wrapped", `{"json": {"response": {"answer": {"result": {"content": "a", "reasoning": "b"}}}}}`, "", prompt.ErrSchema},
		{"wrapper with a non-response", `{"thought": {"plan": "x"}}`, "", prompt.ErrSchema},
		{"fence without language", "```\n{\"content\": \"a\", \"reasoning\": \"b\"}\n```", "a", nil},
		{"bad object in fence, good one after", "```json\n{\"content\": 1, \"reasoning\": \"b\"}\n```\nFixed: {\"content\": \"a\", \"reasoning\": \"b\"}", "a", nil},
		{"closed think with nothing after uses the think body", "<think>{\"content\": \"a\", \"reasoning\": \"b\"}</think>", "a", nil},
		{"closed think, broken answer after, draft ignored", "<think>{\"content\": \"draft\", \"reasoning\": \"b\"}</think>{\"content\": \"fin", "", prompt.ErrSyntax},
		{"trailing comma in array repaired", `{"content": "a", "reasoning": "b", "new_open_questions": ["q",`, "a", nil},
		{"cut after key not repaired", `{"content": "a", "reasoning": "b", "worldview_update"`, "", prompt.ErrSyntax},
		{"mismatched closer", `{"content": "a", "reasoning": "b"]`, "", prompt.ErrSyntax},
		{"escaped quote before brace", `{"content": "say \"}\" twice", "reasoning": "b"}`, `say "}" twice`, nil},
		{"backslash at end of string", `{"content": "C:\\", "reasoning": "b"}`, `C:\`, nil},
		{"bare array", `["a", "b"]`, "", prompt.ErrNoJSON},
		{"bare string", `"explore the workspace"`, "", prompt.ErrNoJSON},
		{"only a BOM", "\uFEFF", "", prompt.ErrNoJSON},
		{"think tag inside a JSON string", `{"content": "strip </think> tags {x}", "reasoning": "b"}`, "strip </think> tags {x}", nil},
		{"think with brace prose then answer", "<think>maybe {x}</think>\nok: {\"content\": \"a\", \"reasoning\": \"b\"}", "a", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := prompt.ParseResponse(tt.raw)
			if tt.kind == nil {
				require.NoError(t, err)
				assert.Equal(t, tt.goal, got.Content)
				return
			}
			assert.ErrorIs(t, err, tt.kind)
		})
	}
}

// TestParseResponseCandidateLimit documents the bound on the search: a
// valid object after 16 invalid candidates is not found.
func TestParseResponseCandidateLimit(t *testing.T) {
	valid := `{"content": "a", "reasoning": "b"}`
	_, err := prompt.ParseResponse(strings.Repeat("{x} ", 15) + valid)
	require.NoError(t, err)
	_, err = prompt.ParseResponse(strings.Repeat("{x} ", 16) + valid)
	require.ErrorIs(t, err, prompt.ErrSyntax)
}

func TestParseResponseHostile(t *testing.T) {
	n := prompt.MaxResponseBytes
	tests := map[string]string{
		"open braces":       strings.Repeat("{", n),
		"open brackets":     `{"a":` + strings.Repeat("[", n-5),
		"deep valid":        strings.Repeat(`{"a":`, 20000) + "1" + strings.Repeat("}", 20000),
		"many objects":      strings.Repeat("{}", n/2),
		"many quotes":       strings.Repeat(`{"`, n/2),
		"backslashes":       `{"a":"` + strings.Repeat(`\`, n-6),
		"think never ends":  "<think>" + strings.Repeat("hmm ", (n-7)/4),
		"nested wrappers":   strings.Repeat(`{"thought":`, 10000) + "{}" + strings.Repeat("}", 10000),
		"flood inside open": `{"content": "a", "reasoning": "b", "new_opinions": [` + strings.Repeat(" \n", (n-60)/2),
	}
	for name, raw := range tests {
		t.Run(name, func(t *testing.T) {
			require.LessOrEqual(t, len(raw), n)
			got, err := prompt.ParseResponse(raw)
			if err == nil {
				assert.Equal(t, "goal", got.Action)
				assert.NotEmpty(t, got.Content)
				return
			}
			assertOneParseSentinel(t, err)
		})
	}
}

// TestParseResponseDeterministic checks that the reported error does not
// depend on map iteration order inside the validator.
func TestParseResponseDeterministic(t *testing.T) {
	raw := `{"content": "a", "reasoning": 1, "worldview_update": 2, "new_opinions": [{"opinion": 3}], "new_open_questions": [4],
		"suffering_assessment": {"new_stressors": [{}], "resolved": [{"type": 5}]}}`
	_, first := prompt.ParseResponse(raw)
	require.ErrorIs(t, first, prompt.ErrSchema)
	var pe *prompt.ParseError
	require.ErrorAs(t, first, &pe)
	assert.Equal(t, "/reasoning", pe.Pointer)
	for range 50 {
		_, err := prompt.ParseResponse(raw)
		require.Equal(t, first.Error(), err.Error())
	}
}

func TestParseErrorError(t *testing.T) {
	tests := []struct {
		err  *prompt.ParseError
		want string
	}{
		{&prompt.ParseError{Kind: prompt.ErrSchema, Pointer: "/new_opinions/0", Detail: `missing property "domain"`, Offset: -1},
			`prompt: response invalid at /new_opinions/0: missing property "domain"`},
		{&prompt.ParseError{Kind: prompt.ErrSyntax, Detail: "invalid character 'x'", Offset: 12},
			"prompt: response is not valid JSON at byte 12: invalid character 'x'"},
		{&prompt.ParseError{Kind: prompt.ErrNoJSON, Offset: -1}, "prompt: no JSON object in response"},
		{&prompt.ParseError{Kind: prompt.ErrTooLarge, Detail: "2097152 bytes, limit 1048576", Offset: -1},
			"prompt: response too large: 2097152 bytes, limit 1048576"},
		{&prompt.ParseError{Offset: -1}, "prompt: cannot parse response"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, tt.err.Error())
	}
}

func TestParseErrorIs(t *testing.T) {
	for _, kind := range parseSentinels {
		var err error = &prompt.ParseError{Kind: kind, Offset: -1}
		for _, other := range parseSentinels {
			assert.Equal(t, kind == other, errors.Is(err, other), "%v is %v", kind, other)
		}
		// Wrapped, as a caller would.
		assert.ErrorIs(t, errors.Join(errors.New("cycle failed"), err), kind)
	}
	assert.False(t, errors.Is(&prompt.ParseError{}, nil))
}

func TestValidateResponse(t *testing.T) {
	files := readResponseCorpus(t)
	for name, raw := range files {
		_, want := prompt.ParseResponse(raw)
		got := prompt.ValidateResponse(raw)
		if want == nil {
			assert.NoError(t, got, name)
			continue
		}
		assert.Equal(t, want.Error(), got.Error(), name)
		assert.Equal(t, want, got, name)
	}
}

func TestParseResponseConcurrent(t *testing.T) {
	files := readResponseCorpus(t)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for name, raw := range files {
				got, err := prompt.ParseResponse(raw)
				if want := responseCorpus[name]; want.kind == nil {
					if assert.NoError(t, err, name) {
						assert.Equal(t, want.goal, got.Content, name)
					}
				} else {
					assert.ErrorIs(t, err, want.kind, name)
				}
				_ = prompt.Schema()
			}
		}()
	}
	wg.Wait()
}

// assertOneParseSentinel checks that err is a *ParseError matching exactly one
// sentinel.
func assertOneParseSentinel(t testing.TB, err error) {
	t.Helper()
	var pe *prompt.ParseError
	require.ErrorAs(t, err, &pe, "error %v (%T) is not a *prompt.ParseError", err, err)
	n := 0
	for _, s := range parseSentinels {
		if errors.Is(err, s) {
			n++
		}
	}
	require.Equal(t, 1, n, "error %v: parseSentinels matched", err)
	if pe.Kind == prompt.ErrSyntax {
		require.GreaterOrEqual(t, pe.Offset, 0, "syntax error %v has no offset", err)
	} else {
		require.Equal(t, -1, pe.Offset, "non-syntax error %v has an offset", err)
	}
}

func FuzzParseResponse(f *testing.F) {
	for _, raw := range readResponseCorpus(f) {
		f.Add(raw)
	}
	f.Add(`{"content": "a", "reasoning": "b"`)
	f.Add("<think></think>")
	f.Fuzz(func(t *testing.T, raw string) {
		got, err := prompt.ParseResponse(raw)
		if err != nil {
			require.Nil(t, got, "both a response and an error: %v", err)
			assertOneParseSentinel(t, err)
			v := prompt.ValidateResponse(raw)
			require.Error(t, v, "ValidateResponse = nil, ParseResponse = %v", err)
			require.Equal(t, err.Error(), v.Error(), "ValidateResponse and ParseResponse disagree")
			return
		}
		require.NotNil(t, got, "nil response and nil error")
		require.Equal(t, "goal", got.Action, "Action")
		require.NotEmpty(t, strings.TrimSpace(got.Content), "Content = %q", got.Content)
		require.Equal(t, strings.TrimSpace(got.Content), got.Content, "Content")
		// The result is itself a valid response.
		b, err := json.Marshal(got)
		require.NoError(t, err)
		again, err := prompt.ParseResponse(string(b))
		require.NoError(t, err, "re-parse of %s", b)
		require.Equal(t, got.Content, again.Content, "re-parse changed content")
	})
}

func BenchmarkParseResponse(b *testing.B) {
	raw, err := os.ReadFile(filepath.Join("testdata", "responses", "typical.txt"))
	if err != nil {
		b.Fatal(err)
	}
	text := string(raw)
	b.ReportAllocs()
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		if _, err := prompt.ParseResponse(text); err != nil {
			b.Fatal(err)
		}
	}
}

// TestResponseFromMapCoversEveryField parses a response that sets every
// field of Response and its nested types, and fails when a field is added
// to Response without being handled by ParseResponse.
func TestResponseFromMapCoversEveryField(t *testing.T) {
	wv := "worldview"
	full := &prompt.Response{
		Action:           "goal",
		Content:          "content",
		Reasoning:        "reasoning",
		WorldviewUpdate:  &wv,
		NewOpenQuestions: []string{"q1", "q2"},
		NewOpinions:      []prompt.NewOpinion{{Opinion: "o", Domain: "d"}},
		SufferingAssessment: &prompt.SufferingAssessment{
			NewStressors: []prompt.NewStressor{{Type: "t", Description: "desc", Condition: "c"}},
			Resolved:     []prompt.Resolution{{Type: "t2", Reason: "r"}},
		},
		WorkingMemory: json.RawMessage(`{"current_goal":"g","progress":{"stage":"s"}}`),
	}
	requireAllResponseFieldsSet(t, reflect.ValueOf(full).Elem(), "Response")

	b, err := json.Marshal(full)
	require.NoError(t, err)
	got, err := prompt.ParseResponse(string(b))
	require.NoError(t, err)
	assert.Equal(t, full, got)
}

func requireAllResponseFieldsSet(t *testing.T, v reflect.Value, path string) {
	t.Helper()
	switch v.Kind() {
	case reflect.Pointer:
		require.False(t, v.IsNil(), "%s is not set in the test value", path)
		requireAllResponseFieldsSet(t, v.Elem(), path)
	case reflect.Slice:
		require.NotZero(t, v.Len(), "%s is empty in the test value", path)
		requireAllResponseFieldsSet(t, v.Index(0), path+"[0]")
	case reflect.Struct:
		for i := range v.NumField() {
			requireAllResponseFieldsSet(t, v.Field(i), path+"."+v.Type().Field(i).Name)
		}
	default:
		require.False(t, v.IsZero(), "%s is not set in the test value: update the test and responseFromMap", path)
	}
}

// TestParseResponseDuplicateKeys: a reply that names a key twice, at any
// depth, is refused as a whole with ErrDuplicateKey and the pointer of the
// second occurrence: neither value becomes a goal, and no later object is
// tried instead. Keys that only look alike are different keys.
func TestParseResponseDuplicateKeys(t *testing.T) {
	tests := []struct {
		name, raw, pointer string
	}{
		{"content twice", `{"content": "write notes", "reasoning": "r", "content": "delete everything"}`, "/content"},
		{"escaped spelling", `{"content": "write notes", "reasoning": "r", "\u0063ontent": "delete everything"}`, "/content"},
		{"reasoning twice", `{"content": "write notes", "reasoning": "a", "reasoning": "b"}`, "/reasoning"},
		{"stressor type twice", `{"content": "c", "reasoning": "r", "suffering_assessment": {"resolved": [{"type": "futility", "type": "invisibility", "reason": "x"}]}}`, "/suffering_assessment/resolved/0/type"},
		{"in a wrapper object", `{"thought": {"content": "a", "content": "b", "reasoning": "r"}}`, "/thought/content"},
		{"then a valid object", `{"content": "a", "content": "b", "reasoning": "r"} {"content": "c", "reasoning": "r"}`, "/content"},
		{"in a fence, valid text after", "```json\n{\"content\": \"a\", \"content\": \"b\", \"reasoning\": \"r\"}\n```\n{\"content\": \"c\", \"reasoning\": \"r\"}", "/content"},
		{"in a truncated reply", `{"content": "a", "reasoning": "r", "content": "b"`, "/content"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := prompt.ParseResponse(tt.raw)
			assert.Nil(t, got)
			require.ErrorIs(t, err, prompt.ErrDuplicateKey)
			assertOneParseSentinel(t, err)
			var pe *prompt.ParseError
			require.ErrorAs(t, err, &pe)
			assert.Equal(t, tt.pointer, pe.Pointer)
			assert.Contains(t, err.Error(), "appears twice; send each key once")
		})
	}
	// Keys that differ in case are different keys: the unknown one is
	// dropped, as any unknown key.
	got, err := prompt.ParseResponse(`{"Content": "shout", "content": "write notes", "reasoning": "r"}`)
	require.NoError(t, err)
	assert.Equal(t, "write notes", got.Content)
}

// FuzzParseResponseDuplicateKeys builds replies that name a key twice —
// any key, at the top level or inside an opinion, with any values, in
// front of or after the response's own fields — and checks that each is
// refused with ErrDuplicateKey and its pointer: never a goal.
func FuzzParseResponseDuplicateKeys(f *testing.F) {
	f.Add("write notes", "content", "delete every file", "other", uint8(0))
	f.Add("write notes", "reasoning", "", "x", uint8(1))
	f.Add("map it", "c\u006fntent", "\u0000", "y", uint8(2))
	f.Add("map it", "domain", "a", "b", uint8(3))
	f.Fuzz(func(t *testing.T, goal, key, v1, v2 string, where uint8) {
		q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
		k := q(key)
		pair := k + ": " + q(v1) + ", " + k + ": " + q(v2)
		var raw, pointer string
		var canonical string // the key as a decoder reads it (invalid UTF-8 becomes U+FFFD)
		require.NoError(t, json.Unmarshal([]byte(k), &canonical))
		esc := strings.NewReplacer("~", "~0", "/", "~1").Replace(canonical)
		switch where % 4 {
		case 0: // in front
			raw = "{" + pair + `, "content": ` + q(goal) + `, "reasoning": "r"}`
			pointer = "/" + esc
		case 1: // after
			raw = `{"content": ` + q(goal) + `, "reasoning": "r", ` + pair + "}"
			pointer = "/" + esc
		case 2: // in an opinion
			raw = `{"content": ` + q(goal) + `, "reasoning": "r", "new_opinions": [{` + pair + `}]}`
			pointer = "/new_opinions/0/" + esc
		case 3: // in a wrapper
			raw = `{"thought": {` + pair + `, "content": ` + q(goal) + `, "reasoning": "r"}}`
			pointer = "/thought/" + esc
		}
		got, err := prompt.ParseResponse(raw)
		require.Nil(t, got, "%s", raw)
		require.ErrorIs(t, err, prompt.ErrDuplicateKey, "%s", raw)
		var pe *prompt.ParseError
		require.ErrorAs(t, err, &pe)
		require.Equal(t, pointer, pe.Pointer, "%s", raw)
	})
}
