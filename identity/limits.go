package identity

// Limits holds every cap on identity state and on what the prompt shows of
// it. Lengths are in characters (Unicode code points, spec §3), counts in
// entries. A zero field means its default; [DefaultLimits] lists them with
// their sources.
type Limits struct {
	// Stored caps, enforced on every write and on load.
	Worldview      int // worldview characters: 600 (spec §3)
	Opinions       int // opinions kept: 20 (spec §3)
	Questions      int // open questions kept: 12 (spec §3)
	NarrativeKept  int // narrative characters kept (the tail): 800 (spec §5)
	Discoveries    int // discoveries kept: 20
	DiscoveryChars int // characters per discovery: 300
	Goals          int // goal history entries kept: 100
	Outcome        int // outcome summary characters: 400 (spec §2 row 13)
	Inbox          int // unread peer and host messages kept per agent: 20
	EntryChars     int // characters of one opinion, question or goal objective: 1000

	// Prompt caps: how much of the state the prompt shows (spec §2).
	NarrativeShown    int // first characters of the narrative: 400
	OpinionsShown     int // most recent opinions: 6
	QuestionsShown    int // most recent open questions: 5
	DiscoveriesShown  int // most recent discoveries: 5
	GoalsShown        int // last goals in "WHAT YOU'VE BEEN DOING LATELY": 5
	PeerNarrative     int // first characters of a peer's narrative: 150
	PeerMessagesShown int // last inbox messages: 5
	PeerMessage       int // characters per peer message: 200
	HostMessage       int // characters of a host message: 500
}

// DefaultLimits returns the spec's caps.
func DefaultLimits() Limits {
	return Limits{
		Worldview:      600,
		Opinions:       20,
		Questions:      12,
		NarrativeKept:  800,
		Discoveries:    20,
		DiscoveryChars: 300,
		Goals:          100,
		Outcome:        400,
		Inbox:          20,
		EntryChars:     1000,

		NarrativeShown:    400,
		OpinionsShown:     6,
		QuestionsShown:    5,
		DiscoveriesShown:  5,
		GoalsShown:        5,
		PeerNarrative:     150,
		PeerMessagesShown: 5,
		PeerMessage:       200,
		HostMessage:       500,
	}
}

// WithDefaults returns l with every zero (or negative) field replaced by its
// default.
func (l Limits) WithDefaults() Limits { return l.withDefaults() }

func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	set := func(v *int, def int) {
		if *v <= 0 {
			*v = def
		}
	}
	set(&l.Worldview, d.Worldview)
	set(&l.Opinions, d.Opinions)
	set(&l.Questions, d.Questions)
	set(&l.NarrativeKept, d.NarrativeKept)
	set(&l.Discoveries, d.Discoveries)
	set(&l.DiscoveryChars, d.DiscoveryChars)
	set(&l.Goals, d.Goals)
	set(&l.Outcome, d.Outcome)
	set(&l.Inbox, d.Inbox)
	set(&l.EntryChars, d.EntryChars)
	set(&l.NarrativeShown, d.NarrativeShown)
	set(&l.OpinionsShown, d.OpinionsShown)
	set(&l.QuestionsShown, d.QuestionsShown)
	set(&l.DiscoveriesShown, d.DiscoveriesShown)
	set(&l.GoalsShown, d.GoalsShown)
	set(&l.PeerNarrative, d.PeerNarrative)
	set(&l.PeerMessagesShown, d.PeerMessagesShown)
	set(&l.PeerMessage, d.PeerMessage)
	set(&l.HostMessage, d.HostMessage)
	return l
}
