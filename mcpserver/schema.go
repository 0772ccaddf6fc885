package mcpserver

import (
	"fmt"
	"slices"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// addTool registers a tool like mcp.AddTool, with an input schema that is
// portable. The SDK infers a slice or map argument as
// {"type": ["null", "array"]} (a nil slice marshals as null), which some
// clients' schema subsets refuse (Gemini's, and the MCP Inspector flags
// it); every argument here is optional by omission instead, so the schema
// says the plain type. It panics, as mcp.AddTool does, when In has no
// schema.
func addTool[In, Out any](s *mcp.Server, t *mcp.Tool, h mcp.ToolHandlerFor[In, Out]) {
	if t.InputSchema == nil {
		schema, err := jsonschema.For[In](nil)
		if err != nil {
			panic(fmt.Sprintf("mcpserver: tool %q: input schema: %v", t.Name, err))
		}
		portable(schema)
		t.InputSchema = schema
	}
	mcp.AddTool(s, t, h)
}

// portable replaces a type list of one type and "null" by the one type,
// in s and every schema below it.
func portable(s *jsonschema.Schema) {
	if s == nil {
		return
	}
	if len(s.Types) == 2 && slices.Contains(s.Types, "null") {
		i := slices.Index(s.Types, "null")
		s.Type, s.Types = s.Types[1-i], nil
	}
	for _, p := range s.Properties {
		portable(p)
	}
	portable(s.Items)
	portable(s.AdditionalProperties)
	for _, list := range [][]*jsonschema.Schema{s.AnyOf, s.AllOf, s.OneOf, s.PrefixItems} {
		for _, sub := range list {
			portable(sub)
		}
	}
}
