package mcptools

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/existence-loop/sdk/internal/strictjson"
)

// Defaults of [ServerConfig] and [Config].
const (
	// DefaultTimeout bounds one tool call: the tool loop's own default
	// (toolloop.DefaultToolTimeout, 60 s).
	DefaultTimeout = 60 * time.Second
	// DefaultMaxResultBytes caps one tool result, like the workspace's
	// read_file (256 KiB).
	DefaultMaxResultBytes = 256 << 10
	// DefaultConnectTimeout bounds starting a server, the MCP initialize
	// handshake and listing its tools.
	DefaultConnectTimeout = 30 * time.Second
	// DefaultMinBackoff and DefaultMaxBackoff bound the wait before a
	// server that crashed or could not be reached is started again: the
	// wait doubles with each failure in a row, from the minimum to the
	// maximum.
	DefaultMinBackoff = time.Second
	DefaultMaxBackoff = time.Minute
)

// Separator joins a server's name and its tool's name in the name the
// model sees: server "fs" and tool "read" give "fs__read". Server names
// may not contain "_", so the first Separator always ends the server name
// and names from different servers cannot collide.
const Separator = "__"

// validServerName is the rule for [ServerConfig].Name.
var validServerName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9-]{0,23}$`)

// ErrConfig matches (with [errors.Is]) every configuration error returned
// by [Connect] (an invalid [Config]), [ParseFlag] and [LoadFile].
var ErrConfig = errors.New("mcptools: bad configuration")

// ServerConfig is one MCP server the agents may use: a command run over
// stdio, or a URL spoken to over streamable HTTP (exactly one of Command
// and URL).
type ServerConfig struct {
	// Name prefixes the server's tools ("fs" gives "fs__read_file"):
	// 1–24 letters, digits and "-", starting with a letter or digit, and
	// unique within a [Config].
	Name string `json:"-"`

	// Command, Args, Env and Dir start a stdio server. Env entries are
	// added to this process's environment (KEY=VALUE, a later entry
	// wins); Dir is the working directory (default this process's).
	Command string            `json:"command,omitempty"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
	Dir     string            `json:"dir,omitempty"`
	// Stderr receives a stdio server's standard error; nil discards it.
	Stderr io.Writer `json:"-"`

	// URL is the endpoint of a streamable HTTP server, e.g.
	// "http://127.0.0.1:8080/mcp". Headers are sent with every request
	// (e.g. "Authorization": "Bearer ...").
	URL     string            `json:"url,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`

	// Transport, when set, makes a new connection to an in-process server
	// (e.g. one side of mcp.NewInMemoryTransports) instead of Command or
	// URL; it is called at every (re)connection.
	Transport func() mcp.Transport `json:"-"`

	// Allow lists the server's tools the agents may use, by the server's
	// own names (without the prefix). Empty allows every tool the server
	// lists. A name listed here that the server does not offer is an error
	// from [Connect], so that a typo cannot silently remove a tool.
	Allow []string `json:"allow,omitempty"`
	// Timeout bounds each tool call (default 60 s, [DefaultTimeout]). A
	// call that exceeds it fails with an error naming the server, the tool
	// and the timeout.
	Timeout Duration `json:"timeout,omitzero"`
	// MaxResultBytes caps a tool result, in bytes of the text the model
	// would see (default 256 KiB). A larger result fails the call with
	// [ErrTooLarge].
	MaxResultBytes int `json:"max_result_bytes,omitempty"`
	// NonText lets the model see content other than text: images, audio
	// and binary resources are rendered as data: URLs (base64). By default
	// such content is replaced with a one-line note saying what was left
	// out.
	NonText bool `json:"non_text,omitempty"`
}

// Duration is a time.Duration that reads and writes JSON as a Go duration
// string ("60s", "1m30s").
type Duration time.Duration

// MarshalJSON writes d as a duration string.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

// UnmarshalJSON reads a duration string such as "45s".
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("duration: want a string such as \"45s\": %w", err)
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	*d = Duration(v)
	return nil
}

// Config configures a [Set] of MCP servers.
type Config struct {
	// Servers are the MCP servers to connect to.
	Servers []ServerConfig
	// ConnectTimeout bounds starting one server, its initialize handshake
	// and the listing of its tools (default 30 s).
	ConnectTimeout time.Duration
	// MinBackoff and MaxBackoff bound the wait before a crashed or
	// unreachable server is started again (defaults 1 s and 1 min). During
	// the wait its tools fail at once with a [*DownError].
	MinBackoff, MaxBackoff time.Duration
	// Now is the clock of the backoff; default time.Now.
	Now func() time.Time
	// Observer receives every [Event] (connections, crashes, failed
	// calls). It is called synchronously and must not block.
	Observer func(Event)
	// Logger receives diagnostics; default slog.Default().
	Logger *slog.Logger
	// Elicit answers servers' elicitation/create requests (a server
	// asking the user something during a tool call). Nil declines each at
	// once. Either way the client declares the elicitation capability, so
	// that no call waits for an answer that never comes, and each answer
	// is an [EventElicited].
	Elicit ElicitFunc
}

// check validates cfg and fills in its defaults.
func (cfg *Config) check() error {
	if cfg.ConnectTimeout < 0 || cfg.MinBackoff < 0 || cfg.MaxBackoff < 0 {
		return fmt.Errorf("%w: negative duration", ErrConfig)
	}
	if cfg.ConnectTimeout == 0 {
		cfg.ConnectTimeout = DefaultConnectTimeout
	}
	if cfg.MinBackoff == 0 {
		cfg.MinBackoff = DefaultMinBackoff
	}
	if cfg.MaxBackoff == 0 {
		cfg.MaxBackoff = DefaultMaxBackoff
	}
	if cfg.MaxBackoff < cfg.MinBackoff {
		cfg.MaxBackoff = cfg.MinBackoff
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	seen := map[string]bool{}
	for i := range cfg.Servers {
		s := &cfg.Servers[i]
		if err := s.check(); err != nil {
			return err
		}
		if seen[s.Name] {
			return fmt.Errorf("%w: server name %q used twice", ErrConfig, s.Name)
		}
		seen[s.Name] = true
	}
	return nil
}

// check validates one server and fills in its defaults.
func (s *ServerConfig) check() error {
	if !validServerName.MatchString(s.Name) {
		return fmt.Errorf("%w: server name %q: want 1–24 letters, digits and \"-\" (no \"_\"), starting with a letter or digit", ErrConfig, s.Name)
	}
	n := 0
	for _, set := range []bool{s.Command != "", s.URL != "", s.Transport != nil} {
		if set {
			n++
		}
	}
	switch {
	case n == 0:
		return fmt.Errorf("%w: server %q: needs a command or a url", ErrConfig, s.Name)
	case n > 1:
		return fmt.Errorf("%w: server %q: has more than one of command, url and transport", ErrConfig, s.Name)
	case s.URL != "" && !strings.HasPrefix(s.URL, "http://") && !strings.HasPrefix(s.URL, "https://"):
		return fmt.Errorf("%w: server %q: url %q: want http:// or https://", ErrConfig, s.Name, s.URL)
	}
	if s.Timeout < 0 || s.MaxResultBytes < 0 {
		return fmt.Errorf("%w: server %q: negative timeout or max_result_bytes", ErrConfig, s.Name)
	}
	if s.Timeout == 0 {
		s.Timeout = Duration(DefaultTimeout)
	}
	if s.MaxResultBytes == 0 {
		s.MaxResultBytes = DefaultMaxResultBytes
	}
	return nil
}

// ParseFlag parses the value of a command-line flag such as the trio's
// -mcp: "NAME=COMMAND ARG..." starts a stdio server (the command line is
// split at white space; use [LoadFile] for arguments that contain spaces),
// and "NAME=http://..." or "NAME=https://..." names a streamable HTTP
// server. Every tool of the server is allowed, with the default limits.
// Errors match [ErrConfig].
func ParseFlag(v string) (ServerConfig, error) {
	name, rest, ok := strings.Cut(v, "=")
	rest = strings.TrimSpace(rest)
	if !ok || rest == "" {
		return ServerConfig{}, fmt.Errorf("%w: %q: want NAME=COMMAND [ARG...] or NAME=URL", ErrConfig, v)
	}
	s := ServerConfig{Name: strings.TrimSpace(name)}
	if strings.HasPrefix(rest, "http://") || strings.HasPrefix(rest, "https://") {
		s.URL = rest
	} else {
		f := strings.Fields(rest)
		s.Command, s.Args = f[0], f[1:]
	}
	return s, s.check()
}

// fileConfig is the JSON of [LoadFile]: the "mcpServers" object that MCP
// clients commonly use, keyed by server name.
type fileConfig struct {
	Servers map[string]ServerConfig `json:"mcpServers"`
}

// LoadFile reads a JSON configuration file in the shape MCP clients
// commonly use, with this package's optional limits:
//
//	{"mcpServers": {
//	  "fs":   {"command": "mcp-fs", "args": ["/srv/data"], "env": {"LOG": "0"},
//	           "allow": ["read_file", "list_directory"], "timeout": "30s"},
//	  "wiki": {"url": "http://127.0.0.1:9000/mcp",
//	           "headers": {"Authorization": "Bearer s3cret"},
//	           "max_result_bytes": 65536, "non_text": false}
//	}}
//
// The servers are returned sorted by name. Unknown fields are an error
// (a misspelt "allow" must not allow everything), and so is a key named
// twice in one object (two "fs" servers, two "allow" lists). Errors: the
// file's read error, or one matching [ErrConfig].
func LoadFile(path string) ([]ServerConfig, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if err := strictjson.Check(data); err != nil {
		// Two "fs" servers, or two "allow" lists: which one is meant?
		return nil, fmt.Errorf("%w: %s: %v", ErrConfig, path, err)
	}
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	var f fileConfig
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrConfig, path, err)
	}
	if f.Servers == nil {
		return nil, fmt.Errorf("%w: %s: no \"mcpServers\" object", ErrConfig, path)
	}
	names := make([]string, 0, len(f.Servers))
	for n := range f.Servers {
		names = append(names, n)
	}
	slices.Sort(names)
	out := make([]ServerConfig, 0, len(names))
	for _, n := range names {
		s := f.Servers[n]
		s.Name = n
		if err := s.check(); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		out = append(out, s)
	}
	return out, nil
}
