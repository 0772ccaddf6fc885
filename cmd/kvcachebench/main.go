// Command kvcachebench measures how much of the agents' prompts a real
// model server serves from its KV cache: it starts the engine `.ci/engine`
// installed (a real Ollama, or llama.cpp behind the project's test
// server), runs the trio (`existence run`) or a swarm (`existence swarm`)
// against it for a while, and prints the cached share of the prompt
// tokens, the prompt tokens evaluated per cycle, the cycles, the model
// reloads and the host-reply latency. It is a program that prints
// figures, not a timed test (docs/performance.md).
//
//	bash .ci/engine
//	go run ./cmd/kvcachebench -engine ollama -run trio -slots 4 -autonomy-workers 3 -layout cache-agent -duration 360s
//	go run ./cmd/kvcachebench -engine llamacpp -run swarm -agents 30 -slots 1 -layout original
//
// The model has random weights (cmd/mkgguf): as in the TestEngine tests,
// a small proxy in front of the engine bounds the JSON the replies may
// hold (strings of at most 12 characters, arrays of one item) and makes
// every reply to a request with tools a tool call
// (internal/engine.ConstrainChat), what a trained model would choose.
//
// Where the figures come from: Ollama's "loading cache slot … prompt=N
// used=M" debug lines (OLLAMA_DEBUG=1; its prompt_eval_count counts the
// whole prompt), and the llama.cpp test server's "prompt=N cached=M" lines
// (llama.cpp's cache_n). A reload is a "loading model" line of Ollama's
// after the first.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/existence-loop/sdk/internal/engine"
)

type options struct {
	engine, run, layout, existence string
	slots, agents, threads, window int
	hostMessages, workers          int
	duration, llmTimeout           time.Duration
	keep, multiUser                bool
	ctx                            context.Context // ends on SIGINT or SIGTERM: the run stops early
}

func main() {
	var o options
	flag.StringVar(&o.engine, "engine", engine.Ollama, "the engine: ollama (the real server .ci/engine builds) or llamacpp (node-llama-cpp behind the test server)")
	flag.StringVar(&o.run, "run", "trio", "what runs against it: trio (existence run) or swarm (existence swarm)")
	flag.StringVar(&o.layout, "layout", "cache", "-prompt-layout: original, cache or cache-agent")
	flag.IntVar(&o.slots, "slots", 1, "the engine's parallel slots (OLLAMA_NUM_PARALLEL, --parallel)")
	flag.IntVar(&o.agents, "agents", 30, "the swarm's agents")
	flag.IntVar(&o.hostMessages, "host-messages", 5, "host messages the swarm sends during the run (its host-reply latency)")
	flag.IntVar(&o.workers, "autonomy-workers", 0, "the trio's -autonomy-workers: cycles at once (0: adaptive, which starts at 1; the agents' calls then rarely overlap, and Ollama's runner gives a request that overlaps none the free slot sharing the longest prefix, so agents never spread over the slots)")
	flag.IntVar(&o.threads, "threads", 2, "CPU threads the engine evaluates with")
	flag.IntVar(&o.window, "context-window", 0, "-context-window for the agents (0: the model's length)")
	flag.DurationVar(&o.duration, "duration", 120*time.Second, "how long the agents run")
	flag.StringVar(&o.existence, "existence", "", "the existence binary (default: go build ./cmd/existence into a temporary directory)")
	flag.BoolVar(&o.multiUser, "multiuser-cache", false, "Ollama only: OLLAMA_MULTIUSER_CACHE=1, the runner gives a request the least recently used slot with a copy of the longest shared prefix instead of the slot sharing the longest prefix (which agents sharing a stable prefix take from one another while other slots stay empty); in 0.17.4 with the generated model each such copy fails an assertion and restarts the runner)")
	flag.BoolVar(&o.keep, "keep", false, "keep the temporary directory (engine log, agents' output, requests.jsonl: every chat request as sent to the engine)")
	flag.DurationVar(&o.llmTimeout, "llm-timeout", 10*time.Minute, "the trio's -llm-timeout: one model call (a CPU engine on busy cores evaluates a 2,000-token prompt in minutes)")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	o.ctx = ctx
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "kvcachebench:", err)
		os.Exit(1)
	}
}

// counts is what the proxy saw.
type counts struct {
	mu        sync.Mutex
	requests  map[string]int // by kind: cycle, tool, other
	errors    int
	latencies map[string][]time.Duration
	bodies    io.Writer // -keep: every chat request's body, one a line (requests.jsonl)
}

func run(o options) error {
	if o.run != "trio" && o.run != "swarm" {
		return fmt.Errorf("-run %q: want trio or swarm", o.run)
	}
	dir, err := os.MkdirTemp("", "kvcachebench-")
	if err != nil {
		return err
	}
	if o.keep {
		fmt.Fprintln(os.Stderr, "kvcachebench: keeping", dir)
	} else {
		defer os.RemoveAll(dir)
	}
	bin := o.existence
	if bin == "" {
		bin = filepath.Join(dir, "existence")
		build := exec.Command("go", "build", "-o", bin, "./cmd/existence")
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			return fmt.Errorf("building existence: %w", err)
		}
	}
	logPath := filepath.Join(dir, "engine.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return err
	}
	defer logFile.Close()
	upstream, stop, err := startEngine(o, dir, logFile)
	if err != nil {
		return err
	}
	defer stop()

	c := &counts{requests: map[string]int{}, latencies: map[string][]time.Duration{}}
	if o.keep {
		f, err := os.Create(filepath.Join(dir, "requests.jsonl"))
		if err != nil {
			return err
		}
		defer f.Close()
		c.bodies = f
	}
	px, err := proxy(upstream, c)
	if err != nil {
		return err
	}
	defer px.Close()

	// The model is loaded before the agents start, with the window they
	// will hold (the trio's tool loop: the model's 8192; the swarm's
	// cycles: 4096), as on a server that already runs it: a load a
	// cancelled first call aborts would count as a reload.
	warm := 8192
	if o.run == "swarm" {
		warm = 4096
	}
	if o.window > 0 {
		warm = min(warm, o.window)
	}
	if err := warmUp(upstream, warm); err != nil {
		return err
	}
	host, _ := os.Hostname()
	fmt.Printf("engine %s, %d slot(s), %s, %s layout, %s, %d threads; machine %s, %d CPUs, load %s\n",
		o.engine, o.slots, what(o), o.layout, o.duration, o.threads, host, runtime.NumCPU(), load())
	out, err := runAgents(o, bin, dir, px.URL)
	if err != nil {
		return err
	}
	stop()
	logFile.Sync()
	raw, err := os.ReadFile(logPath)
	if err != nil {
		return err
	}
	return report(o, string(raw), out, c)
}

// warmUp loads the model with a window of numCtx tokens: one chat
// request for one token of reply.
func warmUp(base string, numCtx int) error {
	body, err := json.Marshal(map[string]any{
		"model": engine.ModelName, "stream": false,
		"messages": []map[string]string{{"role": "user", "content": "hello"}},
		"options":  map[string]any{"num_ctx": numCtx, "num_predict": 1},
	})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/api/chat", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("warming the model up: %w", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("warming the model up: HTTP %d: %s", resp.StatusCode, b)
	}
	return nil
}

func what(o options) string {
	if o.run == "swarm" {
		return fmt.Sprintf("swarm of %d", o.agents)
	}
	return "trio"
}

func load() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.Fields(string(b))[0]
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// startEngine starts the engine with its log in logFile and returns its
// base URL and a function that stops it (idempotent).
func startEngine(o options, dir string, logFile *os.File) (string, func(), error) {
	model := os.Getenv(engine.EnvModel)
	if model == "" {
		model = filepath.Join(engine.DefaultDir(), "model.gguf")
	}
	if _, err := os.Stat(model); err != nil {
		return "", nil, fmt.Errorf("%w: run `bash .ci/engine` first", err)
	}
	var cmd *exec.Cmd
	var base string
	switch o.engine {
	case engine.Ollama:
		bin, err := engine.OllamaBinary()
		if err != nil {
			return "", nil, fmt.Errorf("no ollama: run `bash .ci/engine` first: %w", err)
		}
		port, err := freePort()
		if err != nil {
			return "", nil, err
		}
		base = "http://127.0.0.1:" + strconv.Itoa(port)
		env := append(os.Environ(), "OLLAMA_HOST=127.0.0.1:"+strconv.Itoa(port), "OLLAMA_MODELS="+filepath.Join(dir, "models"),
			"OLLAMA_NUM_PARALLEL="+strconv.Itoa(o.slots), "OLLAMA_DEBUG=1", "OLLAMA_NOPRUNE=1", "OLLAMA_NO_CLOUD=1")
		if o.multiUser {
			env = append(env, "OLLAMA_MULTIUSER_CACHE=1")
		}
		cmd = exec.Command(bin, "serve")
		cmd.Env = env
		cmd.Stdout, cmd.Stderr = logFile, logFile
		if err := cmd.Start(); err != nil {
			return "", nil, err
		}
		if err := wait(base + "/api/version"); err != nil {
			_ = cmd.Process.Kill()
			return "", nil, err
		}
		mf := filepath.Join(dir, "Modelfile")
		if err := os.WriteFile(mf, []byte(engine.Modelfile(model, o.threads)), 0o600); err != nil {
			return "", nil, err
		}
		create := exec.Command(bin, "create", engine.ModelName, "-f", mf)
		create.Env = env
		if out, err := create.CombinedOutput(); err != nil {
			_ = cmd.Process.Kill()
			return "", nil, fmt.Errorf("ollama create: %w\n%s", err, out)
		}
	case engine.LlamaCpp:
		files, err := engine.Locate()
		if err != nil {
			return "", nil, fmt.Errorf("%w: run `bash .ci/engine` first", err)
		}
		cmd = exec.Command("node", files.Server, "--model", model, "--modules", files.Modules, "--name", engine.ModelName,
			"--ctx", "8192", "--parallel", strconv.Itoa(o.slots), "--max-queue", "512", "--threads", strconv.Itoa(o.threads),
			"--json-limit", "12", "--tool-choice", "required")
		cmd.Stderr = logFile
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			return "", nil, err
		}
		if err := cmd.Start(); err != nil {
			return "", nil, err
		}
		line, err := bufio.NewReader(stdout).ReadString('\n')
		if err != nil {
			_ = cmd.Process.Kill()
			return "", nil, fmt.Errorf("the llama.cpp server did not start: %w", err)
		}
		go func() { _, _ = io.Copy(io.Discard, stdout) }()
		base = "http://127.0.0.1:" + strings.TrimSpace(line)
	default:
		return "", nil, fmt.Errorf("-engine %q: want ollama or llamacpp", o.engine)
	}
	var once sync.Once
	stop := func() {
		once.Do(func() {
			_ = cmd.Process.Signal(syscall.SIGTERM)
			done := make(chan struct{})
			go func() { _ = cmd.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				_ = cmd.Process.Kill()
				<-done
			}
		})
	}
	return base, stop, nil
}

func wait(u string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s did not answer: %w", u, errors.Join(ctx.Err(), err))
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// toolTurnKey marks, between the proxy's handler and its upstream reply,
// a tool turn whose reply [engine.ToolCallReply] rewrites.
type toolTurnKey struct{}

// proxy starts the constraining proxy in front of upstream; it counts
// chat requests by kind (cycle: a JSON Schema format; tool: tools and no
// format; other) with their latency.
func proxy(upstream string, c *counts) (*httptest.Server, error) {
	up, err := url.Parse(upstream)
	if err != nil {
		return nil, err
	}
	rp := httputil.NewSingleHostReverseProxy(up)
	rp.ModifyResponse = func(resp *http.Response) error {
		// A tool turn's reply is the call its format forced.
		if tool, _ := resp.Request.Context().Value(toolTurnKey{}).(bool); !tool {
			return nil
		}
		return engine.ToolCallResponse(resp)
	}
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/api/chat" {
			rp.ServeHTTP(w, r)
			return
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, 64<<20))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		var probe struct {
			Format json.RawMessage `json:"format"`
			Tools  []any           `json:"tools"`
		}
		kind := "other"
		if json.Unmarshal(body, &probe) == nil {
			switch {
			case len(probe.Format) > 0 && string(probe.Format) != "null":
				kind = "cycle"
			case len(probe.Tools) > 0:
				kind = "tool"
			}
		}
		body, err = engine.ConstrainChat(body, "required", 12)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
		r.Header.Set("Content-Length", strconv.Itoa(len(body)))
		if kind == "tool" {
			r = r.WithContext(context.WithValue(r.Context(), toolTurnKey{}, true))
		}
		rec := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		start := time.Now()
		rp.ServeHTTP(rec, r)
		c.mu.Lock()
		if c.bodies != nil {
			_, _ = c.bodies.Write(append(bytes.TrimSpace(body), '\n'))
		}
		c.requests[kind]++
		if rec.status != http.StatusOK {
			c.errors++
		}
		c.latencies[kind] = append(c.latencies[kind], time.Since(start))
		c.mu.Unlock()
	})), nil
}

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (s *statusWriter) WriteHeader(code int) { s.status = code; s.ResponseWriter.WriteHeader(code) }

func (s *statusWriter) Flush() {
	if f, ok := s.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// agentsOut is what the agents' run reported.
type agentsOut struct {
	cycles    int
	hostReply string // "p50 … ms, p99 … ms (n answered)", or why none
}

// runAgents runs the trio or the swarm against url for the duration.
func runAgents(o options, bin, dir, llmURL string) (agentsOut, error) {
	var out agentsOut
	common := []string{"-llm-url", llmURL, "-model", engine.ModelName, "-prompt-layout", o.layout}
	if o.window > 0 {
		common = append(common, "-context-window", strconv.Itoa(o.window))
	}
	if o.run == "swarm" {
		args := append([]string{"swarm", "-agents", strconv.Itoa(o.agents), "-duration", o.duration.String(), "-host-messages", strconv.Itoa(o.hostMessages), "-json"}, common...)
		cmd := exec.CommandContext(o.ctx, bin, args...)
		cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
		cmd.Dir = dir
		cmd.Stderr = os.Stderr
		b, err := cmd.Output()
		if err != nil {
			return out, fmt.Errorf("existence swarm: %w", err)
		}
		var res struct {
			Cycles    int `json:"cycles"`
			HostReply *struct {
				P50, P99, Max float64
				N             int
			} `json:"host_reply_ms"`
			HostUnanswered int `json:"host_unanswered"`
		}
		if err := json.Unmarshal(lastJSON(b), &res); err != nil {
			return out, fmt.Errorf("existence swarm -json: %w: %s", err, b)
		}
		out.cycles = res.Cycles
		out.hostReply = "none answered"
		if res.HostReply != nil {
			out.hostReply = fmt.Sprintf("p50 %.0f ms, p99 %.0f ms (%d answered, %d not)", res.HostReply.P50, res.HostReply.P99, res.HostReply.N, res.HostUnanswered)
		}
		return out, nil
	}
	args := append([]string{"run", "-json", "-autonomy-workers", strconv.Itoa(o.workers), "-llm-timeout", o.llmTimeout.String(), "-state", filepath.Join(dir, "state"), "-workspace", filepath.Join(dir, "workspace")}, common...)
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return out, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return out, err
	}
	if err := cmd.Start(); err != nil {
		return out, err
	}
	// A host message to one agent every 30 s once the first cycle ended
	// (one sent earlier would cancel the first cycles, still evaluating
	// the prompts the cache is measured on); its reply latency is the
	// time to that agent's next cycle event.
	var (
		mu      sync.Mutex
		pending []time.Time
		waits   []time.Duration
	)
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			var e struct {
				Kind    string `json:"kind"`
				AgentID string `json:"agent_id"`
				Agent   string `json:"agent"`
			}
			if json.Unmarshal(sc.Bytes(), &e) != nil || e.Kind != "cycle" {
				continue
			}
			mu.Lock()
			out.cycles++
			if (e.AgentID == "scout" || e.Agent == "scout" || e.Agent == "Cedar") && len(pending) > 0 {
				waits = append(waits, time.Since(pending[0]))
				pending = pending[1:]
			}
			mu.Unlock()
		}
	}()
	deadline := time.After(o.duration)
	tick := time.NewTicker(30 * time.Second)
loop:
	for {
		select {
		case <-deadline:
			break loop
		case <-o.ctx.Done():
			break loop
		case <-tick.C:
			mu.Lock()
			started := out.cycles > 0
			if started {
				pending = append(pending, time.Now())
			}
			mu.Unlock()
			if started {
				fmt.Fprintln(stdin, "@scout how is the map coming along?")
			}
		}
	}
	tick.Stop()
	_ = cmd.Process.Signal(os.Interrupt)
	<-done
	_ = cmd.Wait()
	mu.Lock()
	defer mu.Unlock()
	out.hostReply = fmt.Sprintf("%d of %d answered", len(waits), len(waits)+len(pending))
	if len(waits) > 0 {
		slices.Sort(waits)
		out.hostReply = fmt.Sprintf("median %.1f s, max %.1f s (%s)", waits[len(waits)/2].Seconds(), waits[len(waits)-1].Seconds(), out.hostReply)
	}
	return out, nil
}

// lastJSON returns the last line of b that starts with '{'.
func lastJSON(b []byte) []byte {
	lines := bytes.Split(bytes.TrimSpace(b), []byte("\n"))
	for i := len(lines) - 1; i >= 0; i-- {
		if bytes.HasPrefix(bytes.TrimSpace(lines[i]), []byte("{")) {
			return lines[i]
		}
	}
	return b
}

var reLlama = regexp.MustCompile(`prompt=(\d+) cached=(\d+) evaluated=(\d+)`)

func report(o options, log string, out agentsOut, c *counts) error {
	var prompt, cached, lookups int
	reloads := 0
	if o.engine == engine.Ollama {
		lines, err := engine.CacheLines(log)
		if err != nil {
			return err
		}
		if len(lines) > 0 {
			lines = lines[1:] // the warm-up's
		}
		for _, l := range lines {
			prompt += l.Prompt
			cached += l.Used
		}
		lookups = len(lines)
		reloads = max(strings.Count(log, `msg="loading model"`)-1, 0) // the warm-up's load is the first
	} else {
		ms := reLlama.FindAllStringSubmatch(log, -1)
		if len(ms) > 0 {
			ms = ms[1:] // the warm-up's
		}
		for _, m := range ms {
			p, _ := strconv.Atoi(m[1])
			k, _ := strconv.Atoi(m[2])
			prompt += p
			cached += k
			lookups++
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	share := 0.0
	if prompt > 0 {
		share = 100 * float64(cached) / float64(prompt)
	}
	perCycle := 0.0
	if out.cycles > 0 {
		perCycle = float64(prompt-cached) / float64(out.cycles)
	}
	fmt.Printf("chat requests   %d cycle, %d tool-loop, %d other; %d not 200; %d cache lookups\n", c.requests["cycle"], c.requests["tool"], c.requests["other"], c.errors, lookups)
	fmt.Printf("prompt tokens   %d, %d from the KV cache: %.1f %% cached\n", prompt, cached, share)
	fmt.Printf("cycles          %d; evaluated prompt tokens per cycle %.0f\n", out.cycles, perCycle)
	fmt.Printf("model reloads   %d\n", reloads)
	fmt.Printf("host replies    %s\n", out.hostReply)
	for _, k := range []string{"cycle", "tool"} {
		if ls := c.latencies[k]; len(ls) > 0 {
			slices.Sort(ls)
			fmt.Printf("%-5s latency   median %.1f s, max %.1f s\n", k, ls[len(ls)/2].Seconds(), ls[len(ls)-1].Seconds())
		}
	}
	fmt.Printf("row: | %s, %d slot(s), %s layout, %s | %.1f %% | %.0f | %d | %d | %s |\n", what(o), o.slots, o.layout, o.duration, share, perCycle, out.cycles, reloads, out.hostReply)
	return nil
}
