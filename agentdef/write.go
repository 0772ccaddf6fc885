package agentdef

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/goccy/go-yaml"
)

// outDef is the YAML [Write] writes: the keys a definition sets.
type outDef struct {
	ID            string   `yaml:"id"`
	Name          string   `yaml:"name,omitempty"`
	Enabled       bool     `yaml:"enabled"`
	LLMModel      string   `yaml:"llm_model,omitempty"`
	ModelServer   *Server  `yaml:"model_server,omitempty"`
	Temperature   *float64 `yaml:"temperature,omitempty"`
	MaxTokens     int      `yaml:"max_tokens,omitempty"`
	Heartbeat     string   `yaml:"heartbeat,omitempty"`
	Budget        string   `yaml:"budget,omitempty"`
	Tools         []string `yaml:"tools,omitempty"`
	Traits        []string `yaml:"traits,omitempty"`
	Domains       []string `yaml:"domains,omitempty"`
	WorkingMemory *outWM   `yaml:"working_memory,omitempty"`
}

type outWM struct {
	Enabled      bool `yaml:"enabled"`
	MaxSizeBytes int  `yaml:"max_size_bytes"`
}

// Write writes each definition as a folder of dir named after its id
// (agent.yaml, and system_prompt.md holding its Role), creating dir when
// needed. The workflow and the rag block are not written (start from
// docs/agents.md for them). An existing folder is not overwritten: the
// error matches fs.ErrExist and nothing is written.
func Write(dir string, defs ...*Definition) error {
	for _, d := range defs {
		if _, err := os.Lstat(filepath.Join(dir, d.ID)); err == nil {
			return fmt.Errorf("agentdef: %s: %w", filepath.Join(dir, d.ID), fs.ErrExist)
		} else if !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("agentdef: %w", err)
		}
	}
	for _, d := range defs {
		o := outDef{ID: d.ID, Name: d.Name, Enabled: d.Enabled, LLMModel: d.Model, ModelServer: d.Server, Temperature: d.Temperature,
			MaxTokens: d.MaxTokens, Tools: d.Tools, Traits: d.Traits, Domains: d.Domains}
		if d.Heartbeat > 0 {
			o.Heartbeat = d.Heartbeat.String()
		}
		if d.Budget.Tokens > 0 {
			o.Budget = d.Budget.String()
		}
		if d.WorkingMemory.Enabled {
			o.WorkingMemory = &outWM{Enabled: true, MaxSizeBytes: d.WorkingMemory.MaxBytes}
		}
		b, err := yaml.MarshalWithOptions(o, yaml.IndentSequence(true))
		if err != nil {
			return fmt.Errorf("agentdef: %s: %w", d.ID, err)
		}
		folder := filepath.Join(dir, d.ID)
		if err := os.MkdirAll(folder, 0o755); err != nil {
			return fmt.Errorf("agentdef: %w", err)
		}
		head := "# The agent " + d.Name + ": keys in docs/agents.md. Its role text is system_prompt.md.\n"
		if err := os.WriteFile(filepath.Join(folder, DefinitionFile), append([]byte(head), b...), 0o644); err != nil {
			return fmt.Errorf("agentdef: %w", err)
		}
		if d.Role != "" {
			if err := os.WriteFile(filepath.Join(folder, SystemPromptFile), []byte(d.Role+"\n"), 0o644); err != nil {
				return fmt.Errorf("agentdef: %w", err)
			}
		}
	}
	return nil
}
