package prompt

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sync"

	invopop "github.com/invopop/jsonschema"
	"github.com/santhosh-tekuri/jsonschema/v5"
)

// Schema returns the JSON Schema (draft 2020-12) of [Response]: the
// structured-output format sent to the model (Ollama's "format", OpenAI's
// response_format.json_schema.schema) and the schema [ParseResponse]
// validates against (spec §3). It is generated once from the Go type with
// github.com/invopop/jsonschema and returned as compact JSON; each call
// returns a fresh copy, which the caller may keep or modify.
//
// The schema is one flat, self-contained object: no $ref, $defs, $id or
// $schema keyword (some servers reject what they do not know; the dialect is
// draft 2020-12). It requires "action", "content" and "reasoning"; "action"
// is the enum ["goal"]; "content" and "reasoning" carry the spec's verbatim
// descriptions ("what you're doing — be honest, not performative" and "what
// actually drove this — not what sounds right, what's true");
// "worldview_update" is a string or null. [ParseResponse] is more lenient
// than the schema, as the original system was (a missing reasoning, null
// lists, entries missing a secondary field: see its step 7); the schema
// still asks the model for everything.
//
// The schema deliberately does not set "additionalProperties": false. The
// original system ignored keys it did not know, and models often add
// harmless ones ("thought", "confidence"); refusing them would turn a usable
// goal into the fallback goal. Unknown keys are accepted and dropped. (This
// also means the schema is not accepted by OpenAI's strict mode as is, which
// requires additionalProperties false and every property required.)
func Schema() json.RawMessage {
	return bytes.Clone(responseSchema().json)
}

// compiledSchema is the generated schema in its three forms.
type compiledSchema struct {
	json      []byte             // compact JSON, as returned by Schema
	validator *jsonschema.Schema // santhosh-tekuri compilation of json
	order     map[string]int     // every property name -> first position in the schema, for stable error order
}

// schemaURL names the in-memory schema resource for the validator; it is
// never fetched.
const schemaURL = "mem:///prompt/response.schema.json"

// responseSchema generates and compiles the schema once. A failure is a bug
// in this package (the input is the Response type, not user data), so it
// panics, like regexp.MustCompile on a package-level pattern.
var responseSchema = sync.OnceValue(func() *compiledSchema {
	c, err := buildSchema()
	if err != nil {
		panic("prompt: cannot build the response schema: " + err.Error())
	}
	return c
})

func buildSchema() (*compiledSchema, error) {
	r := &invopop.Reflector{
		Anonymous:                 true, // no $id
		DoNotReference:            true, // no $ref / $defs: one flat tree
		ExpandedStruct:            true, // the root is the object itself, not a $ref
		AllowAdditionalProperties: true, // see Schema: unknown keys are accepted
	}
	s := r.Reflect(&Response{})
	s.Version = "" // no $schema keyword; the validator is told draft 2020-12

	// worldview_update is a *string: a string, or null for "no change".
	// invopop gives pointers the element's type, so widen it here.
	wv, ok := s.Properties.Get("worldview_update")
	if !ok {
		return nil, fmt.Errorf("no worldview_update property")
	}
	wv.Type = ""
	if wv.Extras == nil {
		wv.Extras = map[string]any{}
	}
	wv.Extras["type"] = []string{"string", "null"}

	b, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}

	comp := jsonschema.NewCompiler()
	comp.Draft = jsonschema.Draft2020
	if err := comp.AddResource(schemaURL, bytes.NewReader(b)); err != nil {
		return nil, err
	}
	v, err := comp.Compile(schemaURL)
	if err != nil {
		return nil, err
	}

	c := &compiledSchema{json: b, validator: v, order: map[string]int{}}
	collectOrder(s, c.order)
	return c, nil
}

// collectOrder numbers every property name in schema order, depth first, so
// that validation errors (which the validator reports in map order) can be
// sorted into document order.
func collectOrder(s *invopop.Schema, order map[string]int) {
	if s == nil {
		return
	}
	if s.Properties != nil {
		for p := s.Properties.Oldest(); p != nil; p = p.Next() {
			if _, seen := order[p.Key]; !seen {
				order[p.Key] = len(order)
			}
			collectOrder(p.Value, order)
		}
	}
	collectOrder(s.Items, order)
}
