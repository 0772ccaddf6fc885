package prompt_test

import (
	"testing"

	"github.com/existence-loop/sdk/prompt"
	"github.com/existence-loop/sdk/prompt/prompttest"
)

// BenchmarkAssemble measures one assembly of the default prompt for a
// representative state (every section present). Target: a few microseconds
// and a handful of allocations.
func BenchmarkAssemble(b *testing.B) {
	a := trio()
	v := prompttest.Cedar().View()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := a.Assemble(v); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAssembleNewAgent measures the smallest realistic prompt.
func BenchmarkAssembleNewAgent(b *testing.B) {
	a := trio()
	v := prompttest.NewAgent("Cedar").View()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := a.Assemble(v); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAssembleBudgetFits measures the cost of a budget that is not
// exceeded (the common case): the size check only.
func BenchmarkAssembleBudgetFits(b *testing.B) {
	a := budgeted(prompt.Budget{MaxChars: 100_000})
	v := prompttest.Cedar().View()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := a.Assemble(v); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAssembleBudgetCuts measures a budget that cuts several sections.
func BenchmarkAssembleBudgetCuts(b *testing.B) {
	v := big().View()
	full, err := trio().Assemble(v)
	if err != nil {
		b.Fatal(err)
	}
	a := budgeted(prompt.Budget{MaxChars: full.Chars * 2 / 3})
	b.ReportAllocs()
	for b.Loop() {
		p, err := a.Assemble(v)
		if err != nil {
			b.Fatal(err)
		}
		if len(p.Cuts) == 0 {
			b.Fatal("no cut")
		}
	}
}
