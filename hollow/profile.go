package hollow

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/existence-loop/sdk/identity"
)

// profile converts identity/{id}/profile.json. Fields of the wrong type are
// skipped with a warning; only a document that is not a JSON object is an
// error. CreatedAt is zero when created_at is missing or unreadable, and
// AgentID and Name are "" when absent: the caller fills them in.
func (d *decoder) profile(data []byte, where string) (identity.Identity, error) {
	o, err := d.parseObject(data, where)
	if err != nil {
		return identity.Identity{}, err
	}
	id := identity.Identity{
		AgentID:   o.str("agent_id"),
		Name:      o.str("name"),
		Traits:    o.strList("traits"),
		Domains:   o.strList("domains"),
		Worldview: o.str("worldview"),
		Questions: o.strList("open_questions"),
		Narrative: o.str("narrative"),
	}
	id.Opinions = d.opinions(o)
	if t, ok := o.timestamp("created_at"); ok {
		id.CreatedAt = t
	}
	return id, nil
}

// opinions reads opinions_list ([{opinion, domain, formed}], oldest first).
// When it is absent or empty, an "opinions" object of the form
// {domain: opinion} or {domain: {opinion: ...}} is read instead, in key
// order.
func (d *decoder) opinions(o object) []identity.Opinion {
	var out []identity.Opinion
	for i, raw := range o.list("opinions_list") {
		e, ok := o.child(raw, fmt.Sprintf("%s: opinions_list[%d]", o.where, i))
		if !ok {
			continue
		}
		text := e.str("opinion")
		if text == "" {
			d.warn("%s: no opinion text; skipped", e.where)
			continue
		}
		op := identity.Opinion{Text: text, Domain: e.str("domain")}
		if t, ok := e.timestamp("formed"); ok {
			op.Formed = t
		}
		out = append(out, op)
	}

	r := o.raw("opinions")
	if r == nil {
		return out
	}
	var legacy map[string]json.RawMessage
	if err := json.Unmarshal(r, &legacy); err != nil {
		d.warn("%s: opinions: want an object, got %s; ignored", o.where, kind(r))
		return out
	}
	if len(legacy) == 0 {
		return out
	}
	if len(out) > 0 {
		d.warn("%s: opinions: %d entries ignored in favour of opinions_list", o.where, len(legacy))
		return out
	}
	domains := make([]string, 0, len(legacy))
	for k := range legacy {
		domains = append(domains, k)
	}
	slices.Sort(domains)
	holder := object{fields: legacy, where: o.where + ": opinions", d: d}
	for _, domain := range domains {
		op := identity.Opinion{Domain: domain}
		if kind(legacy[domain]) == "an object" {
			if e, ok := holder.child(legacy[domain], fmt.Sprintf("%s: opinions[%q]", o.where, domain)); ok {
				op.Text = e.str("opinion")
				if dom := e.str("domain"); dom != "" {
					op.Domain = dom
				}
				if t, ok := e.timestamp("formed"); ok {
					op.Formed = t
				}
			}
		} else {
			op.Text = holder.str(domain)
		}
		if op.Text == "" {
			d.warn("%s: opinions[%q]: no opinion text; skipped", o.where, domain)
			continue
		}
		out = append(out, op)
	}
	d.warn("%s: no opinions_list; imported %d opinions from the \"opinions\" object", o.where, len(out))
	return out
}

// names converts identity/names.json ({name: agent_id}) into a map from
// agent id to name. When several names map to one id, the first in
// lexical order wins, with a warning.
func (d *decoder) names(data []byte, where string) (map[string]string, error) {
	o, err := d.parseObject(data, where)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(o.fields))
	for name := range o.fields {
		names = append(names, name)
	}
	slices.Sort(names)
	byID := map[string]string{}
	for _, name := range names {
		id := o.str(name)
		if id == "" || strings.TrimSpace(name) == "" {
			continue
		}
		if prev, dup := byID[id]; dup {
			d.warn("%s: %q and %q both name agent %q; using %q", where, prev, name, id, prev)
			continue
		}
		byID[id] = strings.TrimSpace(name)
	}
	return byID, nil
}
