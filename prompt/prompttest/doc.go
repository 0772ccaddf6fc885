// Package prompttest is a kit for unit-testing existence prompts: golden
// files, state builders, assertions at the level of sections and caps, and
// helpers for the response side.
//
// A prompt test builds a situation in a few lines with [State], assembles
// it, and checks what the agent will read:
//
//	func TestCrisisPrompt(t *testing.T) {
//		v := prompttest.NewState("Cedar").
//			Stressor("repeated_failure", 0.95, "nothing works", "complete a goal").
//			Goals(identity.Failed, identity.Failed, identity.Abandoned).
//			View()
//		p := prompttest.Assemble(t, prompt.New(prompttest.HollowConfig()), v)
//
//		prompttest.SectionOrder(t, p, prompt.SectionInnerState, prompt.SectionRecentGoals, prompt.SectionDirective)
//		if !strings.Contains(prompttest.SectionWithHeader(t, p, prompt.SectionInnerState), "!! CRISIS STATE") {
//			t.Error("no crisis banner")
//		}
//		prompttest.Golden(t, "crisis", p.Text) // testdata/crisis.golden
//	}
//
// Run go test -update once to write testdata/crisis.golden, read it, commit
// it; from then on any change to the prompt fails the test with a line
// diff until you accept it with -update again.
//
// # Golden files
//
// [Golden] compares a text with testdata/NAME.golden and shows a readable
// [Diff] on failure. The -update flag ([UpdateFlag], [Updating]) is
// registered by this package: do not define your own flag of that name in
// a test package that imports prompttest (the flag package panics on
// duplicate flags).
//
// # State builders
//
// [NewState] starts from a named agent on a fixed clock ([DefaultNow]);
// methods add opinions, questions, narrative, discoveries, stressors at
// given severities, goals with statuses and outcomes, peers, inbox and host
// messages, an assigned task, limits and application values ([State.Values]
// for custom sections). [Cedar] is a representative state that exercises
// every section and cap; [NewAgent] is a brand-new agent; [HollowConfig] is
// the original system's world and directive (spec §7).
//
// # Assertions
//
// [SectionPresent], [SectionAbsent], [SectionOrder], [SectionWithHeader],
// [SectionBody]; caps: [Items], [ShownOpinions], [ShownQuestions],
// [ShownGoals], [ShownMessages], [HistoryChars]; budget: [FitsBudget],
// [SectionCut], [SectionIntact]. They report with t.Errorf and return
// whether they held.
//
// # Responses
//
// [MustParse] and [ParseFails] run candidate model outputs
// through [prompt.ParseResponse] and check the classified error;
// [ParseFiles] checks a directory of collected outputs still parses.
package prompttest
