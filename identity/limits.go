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
	EntryChars     int // characters of one goal objective: 1000
	QuestionChars  int // characters of one open question: 200 (the original's cap, spec §3)
	OpinionChars   int // characters of one opinion: 200 (the original's cap, spec §3)
	DomainChars    int // characters of an opinion's domain: 60 (the original's cap, spec §3)

	// Caps on what one model reply may write (spec §3, the original's
	// per-reply caps). Entries beyond them are dropped, and the
	// existence loop reports each drop as an event.
	WorldviewIgnored  int // a worldview update of at most this many characters is ignored: 20
	QuestionsPerReply int // new open questions taken from one reply: 3
	OpinionsPerReply  int // new opinions taken from one reply: 2
	ResolvedPerReply  int // suffering_assessment.resolved entries taken from one reply: 2

	// Prompt caps: how much of the state the prompt shows (spec §2).
	NarrativeShown    int // first characters of the narrative: 400
	OpinionsShown     int // most recent opinions: 6
	QuestionsShown    int // most recent open questions: 5
	DiscoveriesShown  int // most recent discoveries: 5
	GoalsShown        int // last goals in "WHAT YOU'VE BEEN DOING LATELY": 5
	GoalChars         int // characters of an objective there: 80, and 5 fewer (75) after a status tag, as the original (spec §2 row 14)
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
		QuestionChars:  200,
		OpinionChars:   200,
		DomainChars:    60,

		WorldviewIgnored:  20,
		QuestionsPerReply: 3,
		OpinionsPerReply:  2,
		ResolvedPerReply:  2,

		NarrativeShown:    400,
		OpinionsShown:     6,
		QuestionsShown:    5,
		DiscoveriesShown:  5,
		GoalsShown:        5,
		GoalChars:         80,
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
	set(&l.QuestionChars, d.QuestionChars)
	set(&l.OpinionChars, d.OpinionChars)
	set(&l.DomainChars, d.DomainChars)
	set(&l.WorldviewIgnored, d.WorldviewIgnored)
	set(&l.QuestionsPerReply, d.QuestionsPerReply)
	set(&l.OpinionsPerReply, d.OpinionsPerReply)
	set(&l.ResolvedPerReply, d.ResolvedPerReply)
	set(&l.NarrativeShown, d.NarrativeShown)
	set(&l.OpinionsShown, d.OpinionsShown)
	set(&l.QuestionsShown, d.QuestionsShown)
	set(&l.DiscoveriesShown, d.DiscoveriesShown)
	set(&l.GoalsShown, d.GoalsShown)
	set(&l.GoalChars, d.GoalChars)
	set(&l.PeerNarrative, d.PeerNarrative)
	set(&l.PeerMessagesShown, d.PeerMessagesShown)
	set(&l.PeerMessage, d.PeerMessage)
	set(&l.HostMessage, d.HostMessage)
	return l
}
