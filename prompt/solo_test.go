package prompt_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/prompt"
	"github.com/existence-loop/sdk/prompt/prompttest"
)

// soloConfig is the configuration of a single agent in a workspace (as in
// examples/embed).
func soloConfig() prompt.Config {
	return prompt.Config{
		World:        "You are running as a Go program, embedded in a service. Your world is one workspace directory: /work/.",
		Goals:        []string{"Do what a person asked, if anything", "Read real files in the workspace and improve on what is there"},
		Prohibitions: "goals referencing hardware or tools you do not have",
		Grounding:    "The goal must be grounded in what actually exists in the workspace.",
	}
}

// TestGoldenSolo pins the prompt of a brand-new lone agent: no
// peers section, no discoveries placeholder, no word about peers.
// Regenerate with go test ./prompt -run GoldenSolo -update.
func TestGoldenSolo(t *testing.T) {
	p := prompttest.Assemble(t, prompt.Solo(soloConfig()), prompttest.NewAgent("Cedar").View())
	assert.Equal(t, []string{
		prompt.SectionIdentity, prompt.SectionWorld, prompt.SectionSituation,
		prompt.SectionInnerState, prompt.SectionWorldview, prompt.SectionOpinions,
		prompt.SectionQuestions, prompt.SectionHistory, prompt.SectionTime,
		prompt.SectionDirective, prompt.SectionResponseFormat,
	}, p.Names())
	for _, banned := range []string{"peer", "YOUR PEERS", "(unknown)", "WHAT YOU'VE FOUND OUTSIDE", "no external searches"} {
		assert.NotContains(t, strings.ToLower(p.Text), strings.ToLower(banned))
	}
	assert.Equal(t, "YOUR SITUATION:\n"+prompt.SoloSituation, prompttest.SectionWithHeader(t, p, prompt.SectionSituation))
	prompttest.Golden(t, "solo", p.Text)
}

func TestSoloDiffersFromNewOnlyAsDocumented(t *testing.T) {
	cfg := soloConfig()
	solo, def := prompt.Solo(cfg), prompt.New(cfg)
	assert.Equal(t, def.Names(), solo.Names(), "same sections, same order")
	assert.Equal(t, prompt.SoloSituation, solo.Config().Situation, "the solo situation is in the config")

	// With everything present (Cedar has peers and discoveries), the two
	// prompts differ only in the situation text.
	v := prompttest.Cedar().View()
	ps, pd := prompttest.Assemble(t, solo, v), prompttest.Assemble(t, def, v)
	assert.Equal(t, pd.Names(), ps.Names())
	for _, name := range pd.Names() {
		if name == prompt.SectionSituation {
			continue
		}
		assert.Equal(t, prompttest.SectionWithHeader(t, pd, name), prompttest.SectionWithHeader(t, ps, name), name)
	}
	assert.Equal(t, strings.Replace(pd.Text, prompt.DefaultSituation, prompt.SoloSituation, 1), ps.Text)
}

func TestSoloConditionalSections(t *testing.T) {
	tests := []struct {
		name  string
		state *prompttest.State
		want  map[string]bool // section -> present
		text  map[string]string
	}{
		{"new agent", prompttest.NewAgent("Cedar"),
			map[string]bool{prompt.SectionPeers: false, prompt.SectionDiscoveries: false}, nil},
		{"a discovery", prompttest.NewAgent("Cedar").Discovery("go.mod says go 1.26", "/work/go.mod"),
			map[string]bool{prompt.SectionPeers: false, prompt.SectionDiscoveries: true},
			map[string]string{prompt.SectionDiscoveries: "WHAT YOU'VE FOUND OUTSIDE:\n  - go.mod says go 1.26 (/work/go.mod)"}},
		{"a peer after all", prompttest.NewAgent("Cedar").Peer("Vault", "I build tools."),
			map[string]bool{prompt.SectionPeers: true, prompt.SectionDiscoveries: false},
			map[string]string{prompt.SectionPeers: "YOUR PEERS:\n  Vault: I build tools."}},
		{"only omitted peers", prompttest.NewAgent("Cedar").Edit(func(v *prompt.View) { v.PeersOmitted = 3 }),
			map[string]bool{prompt.SectionPeers: true},
			map[string]string{prompt.SectionPeers: "YOUR PEERS:\n  (and 3 others)"}},
		{"a peer message", prompttest.NewAgent("Cedar").Inbox("host-app", "hello"),
			map[string]bool{prompt.SectionPeerMessages: true, prompt.SectionPeers: false}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := prompttest.Assemble(t, prompt.Solo(soloConfig()), tt.state.View())
			for name, present := range tt.want {
				_, ok := p.Section(name)
				assert.Equal(t, present, ok, "section %s present", name)
			}
			for name, text := range tt.text {
				assert.Equal(t, text, prompttest.SectionWithHeader(t, p, name))
			}
		})
	}
}

func TestSoloKeepsCustomSituationAndBuilders(t *testing.T) {
	cfg := soloConfig()
	cfg.Situation = "You are the only mind here."
	a := prompt.Solo(cfg)
	require.NoError(t, a.Remove(prompt.SectionPeers))
	require.NoError(t, a.InsertAfter(prompt.SectionHistory, prompt.SectionFunc{
		ID: "notes", Text: func(*prompt.View) string { return "NOTES:\n  none" },
	}))
	p := prompttest.Assemble(t, a, prompttest.NewAgent("Cedar").View())
	assert.Equal(t, "YOUR SITUATION:\n"+cfg.Situation, prompttest.SectionWithHeader(t, p, prompt.SectionSituation))
	prompttest.SectionOrder(t, p, prompt.SectionHistory, "notes", prompt.SectionTime)
}

func TestSoloUnderBudget(t *testing.T) {
	cfg := soloConfig()
	cfg.Budget = prompt.Budget{MaxChars: 2500}
	v := prompttest.NewAgent("Cedar").Discoveries(40).Opinions(10).Limits(identity.Limits{DiscoveriesShown: 40}).View()
	p := prompttest.Assemble(t, prompt.Solo(cfg), v)
	assert.True(t, prompttest.FitsBudget(t, p, cfg.Budget))
	assert.True(t, prompttest.SectionCut(t, p, prompt.SectionDiscoveries), "discoveries shrink first, as with New")
	_, ok := p.Section(prompt.SectionPeers)
	assert.False(t, ok)
}
