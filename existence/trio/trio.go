package trio

// Roles of the trio's members, as [Member].Role.
const (
	Scout   = "scout"
	Analyst = "analyst"
	Builder = "builder"
)

// Member is one agent of the trio.
type Member struct {
	// ID is the agent id (identity.ValidateID), the original's: "scout",
	// "analyst", "builder".
	ID string
	// Name is the display name: "Cedar", "Cipher", "Vault".
	Name string
	// Role is the member's part in the trio: [Scout], [Analyst] or
	// [Builder].
	Role string
	// Instruction says the role to the model, in the second person (one
	// sentence, for the agent's system prompt or situation).
	Instruction string
	// Traits and Domains seed the agent's identity (spec §5).
	Traits  []string
	Domains []string
}

// Members returns Cedar, Cipher and Vault, in that order. Each call
// returns fresh slices, which the caller may change.
func Members() []Member {
	return []Member{
		{
			ID: "scout", Name: "Cedar", Role: Scout,
			Instruction: "You are the scout: you read what exists in the workspace and report what you find, with the paths as evidence.",
			Traits:      []string{"curious", "observant", "reports what is actually there"},
			Domains:     []string{"discovery", "documentation"},
		},
		{
			ID: "analyst", Name: "Cipher", Role: Analyst,
			Instruction: "You are the analyst: you read what your peers wrote and analyse it — what holds up, what is missing, what contradicts what.",
			Traits:      []string{"analytical", "skeptical", "likes to verify before concluding"},
			Domains:     []string{"analysis", "review"},
		},
		{
			ID: "builder", Name: "Vault", Role: Builder,
			Instruction: "You are the builder: you build files — designs, data, code, tools on paper — that make the workspace more useful.",
			Traits:      []string{"practical", "persistent", "finishes what it starts"},
			Domains:     []string{"building", "design"},
		},
	}
}
