package engine

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The environment variables that select and locate the engine.
const (
	// EnvEngine selects the engine: "llamacpp" (the test server around
	// node-llama-cpp) or "ollama" (a real `ollama serve` on PATH). Unset,
	// [Start] skips the test.
	EnvEngine = "EXISTENCE_ENGINE"
	// EnvDir is the directory `.ci/engine` installs into; empty means
	// $HOME/.cache/existence-engine ([DefaultDir]).
	EnvDir = "EXISTENCE_ENGINE_DIR"
	// EnvModel overrides the model file (default DIR/model.gguf).
	EnvModel = "EXISTENCE_ENGINE_MODEL"
)

// Engines [Start] knows, the values of [EnvEngine].
const (
	LlamaCpp = "llamacpp"
	Ollama   = "ollama"
)

// How is the one-line hint a skipped test gives.
const How = "run `bash .ci/engine`, then EXISTENCE_ENGINE=llamacpp go test -run TestEngine ./llm/... ./existence/..."

// ModelName is the name the engine serves the model under (Ollama's
// "smollm2-random:latest").
const ModelName = "smollm2-random"

// Config shapes one engine. The zero value is one slot, Ollama's queue of
// 512 and a 4096-token default window.
type Config struct {
	// Slots is the number of requests served at once (Ollama's
	// OLLAMA_NUM_PARALLEL, llama-server's --parallel), each with its own
	// KV cache of the request's window. 0 means 1.
	Slots int
	// Queue is how many requests may wait for a slot (OLLAMA_MAX_QUEUE); a
	// request beyond it is answered 503. 0 means 512, Ollama's default.
	Queue int
	// Window is the default context window in tokens: Ollama's num_ctx when
	// a request sets none, and llama-server's per-slot n_ctx for the
	// OpenAI-compatible endpoints. 0 means 4096 (Ollama's default).
	Window int
	// Threads is the number of CPU threads that evaluate tokens. 0 means 1:
	// on a shared machine more threads spin against each other.
	Threads int
	// ToolChoice "required" makes every reply to a request with tools a
	// tool call whose arguments follow the tool's schema (llama-server's
	// tool_choice "required", applied to Ollama's API too): random weights
	// never choose one. "" leaves the choice to the model.
	ToolChoice string
	// JSONLimit bounds every string a JSON Schema grammar allows to this
	// many characters and every array to one item, so that a reply under
	// format / response_format ends (random weights close a string only by
	// chance). 0 means 12; a negative value leaves them unbounded, as real
	// servers do.
	JSONLimit int
	// Refusal is the wording of the refusal of a prompt over its window on
	// Ollama's API: "" for the current one (llama.cpp's "request (N tokens)
	// exceeds the available context size (W tokens), try increasing it"),
	// "ollama-0.17" for Ollama v0.17's runner ("the input length exceeds
	// the context length").
	Refusal string
	// OllamaVersion is what GET /api/version answers; "" means "0.17.4".
	OllamaVersion string
	// API is "" to serve Ollama's and llama-server's routes on one port,
	// or [LlamaCpp] for llama-server's alone: Ollama's routes then answer
	// 404, as on a real llama-server (clients tell the two apart by GET
	// /api/version).
	API string
}

// Server is a running engine. Its zero value is not usable; see [Start].
type Server struct {
	// URL is the base URL, e.g. "http://127.0.0.1:41235": Ollama's API
	// under /api, llama-server's under /v1 and at the root.
	URL string
	// Upstream is the real Ollama's base URL behind URL's proxy
	// (EXISTENCE_ENGINE=ollama); empty for llama.cpp.
	Upstream string
	// Model is the name the model is served under.
	Model string
	// Engine is [LlamaCpp] or [Ollama].
	Engine string
	// Config is the configuration the server started with, defaults
	// filled in.
	Config Config

	cmd  *exec.Cmd
	mu   sync.Mutex
	logs bytes.Buffer
}

// Files is where `.ci/engine` put the engine: the node_modules directory
// holding node-llama-cpp, the model file and the test server's source.
type Files struct {
	Dir     string // the install directory (EnvDir)
	Modules string // DIR/node/node_modules
	Model   string // DIR/model.gguf, or EnvModel
	Server  string // internal/engine/server/server.mjs in this checkout
}

// DefaultDir is the install directory when [EnvDir] is unset:
// $HOME/.cache/existence-engine.
func DefaultDir() string {
	if d := os.Getenv(EnvDir); d != "" {
		return d
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return filepath.Join(os.TempDir(), "existence-engine")
	}
	return filepath.Join(home, ".cache", "existence-engine")
}

// Locate returns where the engine's files are, and an error naming the
// first one missing.
func Locate() (Files, error) {
	dir := DefaultDir()
	f := Files{Dir: dir, Modules: filepath.Join(dir, "node", "node_modules"), Model: filepath.Join(dir, "model.gguf")}
	if m := os.Getenv(EnvModel); m != "" {
		f.Model = m
	}
	_, file, _, ok := runtime.Caller(0)
	if ok {
		f.Server = filepath.Join(filepath.Dir(file), "server", "server.mjs")
	}
	for _, p := range []string{filepath.Join(f.Modules, "node-llama-cpp", "package.json"), f.Model, f.Server} {
		if _, err := os.Stat(p); err != nil {
			return f, fmt.Errorf("engine: %w", err)
		}
	}
	return f, nil
}

// Start starts the engine [EnvEngine] names with cfg, waits until it
// answers, and stops it when the test ends. It skips the test, with one
// line saying how to install and select the engine ([How]), when
// EnvEngine is unset or the engine's files are missing; it fails the test
// when the engine does not start within 2 minutes. The engine's log is
// shown when the test fails or runs with -v.
func Start(t testing.TB, cfg Config) *Server {
	t.Helper()
	which := os.Getenv(EnvEngine)
	switch which {
	case "":
		t.Skip("no engine: " + How)
	case LlamaCpp, Ollama:
	default:
		t.Fatalf("engine: %s=%q: want %q or %q", EnvEngine, which, LlamaCpp, Ollama)
	}
	cfg = cfg.withDefaults()
	files, err := Locate()
	if which == LlamaCpp && err != nil {
		t.Skipf("%v: %s", err, How)
	}
	var s *Server
	if which == Ollama {
		s, err = startOllama(t, cfg, files)
	} else {
		s, err = startLlamaCpp(t, cfg, files)
	}
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func (c Config) withDefaults() Config {
	if c.Slots <= 0 {
		c.Slots = 1
	}
	if c.Queue <= 0 {
		c.Queue = 512
	}
	if c.Window <= 0 {
		c.Window = 4096
	}
	if c.Threads <= 0 {
		c.Threads = 1
	}
	if c.JSONLimit == 0 {
		c.JSONLimit = 12
	}
	if c.OllamaVersion == "" {
		c.OllamaVersion = "0.17.4"
	}
	return c
}

// startLlamaCpp runs the test server under node.
func startLlamaCpp(t testing.TB, cfg Config, f Files) (*Server, error) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skipf("engine: node is not installed: %s", How)
	}
	limit := cfg.JSONLimit
	if limit < 0 {
		limit = 0
	}
	args := []string{f.Server,
		"--model", f.Model, "--modules", f.Modules, "--name", ModelName,
		"--ctx", strconv.Itoa(cfg.Window), "--parallel", strconv.Itoa(cfg.Slots),
		"--max-queue", strconv.Itoa(cfg.Queue), "--threads", strconv.Itoa(cfg.Threads),
		"--json-limit", strconv.Itoa(limit), "--ollama-version", cfg.OllamaVersion,
	}
	if cfg.ToolChoice != "" {
		args = append(args, "--tool-choice", cfg.ToolChoice)
	}
	if cfg.Refusal != "" {
		args = append(args, "--refusal", cfg.Refusal)
	}
	if cfg.API != "" {
		args = append(args, "--api", cfg.API)
	}
	s := &Server{Model: ModelName, Engine: LlamaCpp, Config: cfg}
	s.cmd = exec.Command(node, args...)
	s.cmd.Stderr = &lockedWriter{s: s}
	out, err := s.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := s.cmd.Start(); err != nil {
		return nil, fmt.Errorf("engine: starting node: %w", err)
	}
	t.Cleanup(func() { s.stop(t) })

	port := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(out).ReadString('\n')
		port <- strings.TrimSpace(line)
		_, _ = io.Copy(io.Discard, out)
	}()
	select {
	case p := <-port:
		if _, err := strconv.Atoi(p); err != nil {
			return nil, fmt.Errorf("engine: the server did not start (first line %q):\n%s", p, s.Log())
		}
		s.URL = "http://127.0.0.1:" + p
	case <-time.After(2 * time.Minute):
		return nil, fmt.Errorf("engine: the server did not start within 2 minutes:\n%s", s.Log())
	}
	return s, nil
}

// stop ends the engine (SIGTERM, then SIGKILL after 10 s) and shows its
// log when the test failed or runs with -v.
func (s *Server) stop(t testing.TB) {
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = s.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = s.cmd.Process.Kill()
		<-done
	}
	if t.Failed() || testing.Verbose() {
		t.Logf("engine log:\n%s", s.Log())
	}
}

// Log returns what the engine wrote to stderr so far: one line per request
// with its slot, window, prompt tokens (cached and evaluated, with
// tokens/s), generated tokens (with tokens/s) and done reason.
func (s *Server) Log() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.logs.String()
}

type lockedWriter struct{ s *Server }

func (w *lockedWriter) Write(p []byte) (int, error) {
	w.s.mu.Lock()
	defer w.s.mu.Unlock()
	return w.s.logs.Write(p)
}

// freePort asks the kernel for a free loopback port.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// waitHTTP polls url until it answers 200 or ctx ends.
func waitHTTP(ctx context.Context, url string) error {
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return errors.Join(ctx.Err(), err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}
