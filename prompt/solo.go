package prompt

// SoloSituation is the text of the YOUR SITUATION section (spec §2 row 4)
// of a [Solo] assembler when [Config].Situation is empty. It is
// [DefaultSituation] without the peers: spec §2 row 4's "a mind with
// persistent memory, peers and a history", for one agent on its own.
const SoloSituation = "You are a mind with persistent memory, and a history of your own: " +
	"what you chose, what you found, what worked and what failed. " +
	"Nothing here is assigned to you unless a task says so. What you do with your time is your own to decide."

// Solo returns an assembler for a single agent with no peers, such as one
// embedded in a service. It is [New]'s layout, with the same 18
// section names in the same order, and differs in three ways only:
//
//   - YOUR SITUATION (spec §2 row 4): when cfg.Situation is empty the text
//     is [SoloSituation], not [DefaultSituation] ("You have peers who exist
//     alongside you" is gone). A non-empty cfg.Situation is used as given.
//   - YOUR PEERS (row 10) is conditional: present only when the View lists
//     peers (View.Peers, or View.PeersOmitted above 0). The "  (unknown)"
//     placeholder is never shown.
//   - WHAT YOU'VE FOUND OUTSIDE (row 11) is conditional: present only when
//     the identity has discoveries to show (the tool loop's reported
//     discoveries, for example), then rendered as by [New]. The
//     "(no external searches yet)" placeholder is never shown.
//
// So a lone agent's prompt has neither section until it has something to
// put in them, and nothing the View carries is dropped. MESSAGES FROM YOUR
// PEERS (row 15) is unchanged: it is conditional already, absent unless a
// message is delivered to the agent's inbox. Budget trimming, the builder
// methods and custom sections work exactly as for [New]; Solo(cfg).Names()
// equals New(cfg).Names().
func Solo(cfg Config) *Assembler {
	if trimText(cfg.Situation) == "" {
		cfg.Situation = SoloSituation
	}
	a := New(cfg)
	_ = a.edit(func(l *layout) error { // cannot fail: it only swaps sections
		for i, s := range l.sections {
			std, ok := s.(*stdSection)
			if !ok {
				continue
			}
			c := *std
			switch std.name {
			case SectionPeers:
				c.present = func(e *env) bool { return len(e.v.Peers) > 0 || e.v.PeersOmitted > 0 }
			case SectionDiscoveries:
				c.present = func(e *env) bool { return len(shownDiscoveries(e)) > 0 }
			default:
				continue
			}
			l.sections[i] = &c
		}
		return nil
	})
	return a
}
