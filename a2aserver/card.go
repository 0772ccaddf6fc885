package a2aserver

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/existence-loop/sdk/existence"
)

// SecurityScheme is the name of the bearer-token scheme on every card.
const SecurityScheme = "bearer"

// defaultProfile is the [Profile] of an agent when Config.Profile is nil
// or leaves a field empty.
func defaultProfile(a *existence.Agent, p Profile) Profile {
	if strings.TrimSpace(p.Description) == "" {
		p.Description = a.Name() + ", an existence-loop agent (id " + a.ID() + "): a long-lived agent that chooses its own goals every heartbeat " +
			"and takes the tasks given to it into its task queue, pursuing each as a goal at its next existence cycle."
	}
	if len(p.Skills) == 0 {
		p.Skills = []a2a.AgentSkill{{ID: "task", Name: "Do a task",
			Description: "Give the agent a task in plain text (at most 2,000 characters); it answers with a summary of what it did and the artifacts it produced.",
			Tags:        []string{"task"}}}
	}
	for i := range p.Skills {
		if p.Skills[i].Tags == nil {
			p.Skills[i].Tags = []string{}
		}
	}
	return p
}

// base returns the endpoint's URL for r.
func (s *Server) base(r *http.Request) string {
	if s.cfg.BaseURL != "" {
		return strings.TrimSuffix(s.cfg.BaseURL, "/")
	}
	scheme := "http"
	if r != nil && r.TLS != nil {
		scheme = "https"
	}
	host := "localhost"
	if r != nil && r.Host != "" {
		host = r.Host
	}
	return scheme + "://" + host + "/a2a"
}

// Card returns agent a's card, for the endpoint at base (e.g.
// "http://127.0.0.1:8080/a2a"): its name, description and skills
// ([Config].Profile), the JSON-RPC interface at base and the HTTP+JSON one
// at base/rest, both naming its id as their tenant, streaming, and the
// bearer-token security scheme.
func (s *Server) Card(a *existence.Agent, base string) *a2a.AgentCard {
	var p Profile
	if s.cfg.Profile != nil {
		p = s.cfg.Profile(a)
	}
	p = defaultProfile(a, p)
	jr := &a2a.AgentInterface{URL: base, ProtocolBinding: a2a.TransportProtocolJSONRPC, Tenant: a.ID(), ProtocolVersion: a2a.Version}
	rest := &a2a.AgentInterface{URL: base + "/rest", ProtocolBinding: a2a.TransportProtocolHTTPJSON, Tenant: a.ID(), ProtocolVersion: a2a.Version}
	return s.card(a.Name(), p.Description, p.Skills, []*a2a.AgentInterface{jr, rest})
}

func (s *Server) card(name, description string, skills []a2a.AgentSkill, ifaces []*a2a.AgentInterface) *a2a.AgentCard {
	return &a2a.AgentCard{
		Name: name, Description: description, Version: s.cfg.Version,
		SupportedInterfaces: ifaces,
		Capabilities:        a2a.AgentCapabilities{Streaming: true},
		DefaultInputModes:   []string{"text/plain"},
		DefaultOutputModes:  []string{"text/plain"},
		Skills:              skills,
		SecuritySchemes: a2a.NamedSecuritySchemes{SecurityScheme: a2a.HTTPAuthSecurityScheme{Scheme: "Bearer",
			Description: "the token of the run's dashboard (-http-token), as Authorization: Bearer TOKEN"}},
		SecurityRequirements: a2a.SecurityRequirementsOptions{{SecurityScheme: {}}},
	}
}

// SwarmCard returns the card of several agents at base: one skill per
// agent whose id is the agent's id, the tenant to name in requests, and
// interfaces without a tenant.
func (s *Server) SwarmCard(base string) *a2a.AgentCard {
	agents := s.cfg.Agents.Agents()
	skills := make([]a2a.AgentSkill, 0, len(agents))
	for _, a := range agents {
		var p Profile
		if s.cfg.Profile != nil {
			p = s.cfg.Profile(a)
		}
		p = defaultProfile(a, p)
		skills = append(skills, a2a.AgentSkill{ID: a.ID(), Name: a.Name(), Description: p.Description + " Reach it with the tenant " + a.ID() + "; its own card is at " + base + "/" + a.ID() + "/agent-card.json.",
			Tags: []string{"agent", "tenant:" + a.ID()}})
	}
	ifaces := []*a2a.AgentInterface{
		{URL: base, ProtocolBinding: a2a.TransportProtocolJSONRPC, ProtocolVersion: a2a.Version},
		{URL: base + "/rest", ProtocolBinding: a2a.TransportProtocolHTTPJSON, ProtocolVersion: a2a.Version},
	}
	return s.card("existence swarm", "A swarm of existence-loop agents, each reachable by A2A with its id as the tenant (one skill per agent).", skills, ifaces)
}

// serveCard answers GET with agent id's card, or for id "" the card of
// the only agent or of the swarm.
func (s *Server) serveCard(w http.ResponseWriter, r *http.Request, id string) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		writeHTTPError(w, http.StatusMethodNotAllowed, "an agent card is read with GET")
		return
	}
	base := s.base(r)
	var card *a2a.AgentCard
	switch agents := s.cfg.Agents.Agents(); {
	case id != "":
		a := s.cfg.Agents.Agent(id)
		if a == nil {
			writeHTTPError(w, http.StatusNotFound, "no agent "+quote(id)+" is served here")
			return
		}
		card = s.Card(a, base)
	case len(agents) == 1:
		card = s.Card(agents[0], base)
	default:
		card = s.SwarmCard(base)
	}
	b, err := json.Marshal(card)
	if err != nil {
		writeHTTPError(w, http.StatusInternalServerError, "encoding the agent card: "+err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(b)
}
