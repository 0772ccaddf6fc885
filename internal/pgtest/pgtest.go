package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// EnvURL names the environment variable that points the tests at an
// existing server instead of a throwaway one, e.g.
// "postgres://postgres@127.0.0.1:5432/postgres". Its user must be allowed
// to create databases.
const EnvURL = "EXISTENCE_TEST_POSTGRES_URL"

// SkipMessage is the one line a test is skipped with when no server
// binaries are found.
const SkipMessage = "install PostgreSQL: apt-get install -y postgresql"

// Server is a throwaway PostgreSQL server in a temporary directory, or the
// server named by $EXISTENCE_TEST_POSTGRES_URL.
type Server struct {
	// Host and Port are the loopback TCP address (Port 0 for a server
	// given by URL without one).
	Host string
	Port int
	// Dir is the server's temporary directory (data directory, log and
	// unix socket); "" for a server given by URL.
	Dir string

	admin   string // connection string of the maintenance database
	bin     string
	runAs   []string // setpriv prefix when running as root
	stopped bool
	mu      sync.Mutex
}

var shared struct {
	sync.Mutex
	main   bool
	server *Server
	err    error
}

// Main runs the tests of a package with one server shared by all of them,
// started on first use by [New] and stopped when the tests end. Call it
// from TestMain: func TestMain(m *testing.M) { pgtest.Main(m) }.
func Main(m *testing.M) {
	shared.Lock()
	shared.main = true
	shared.Unlock()
	code := m.Run()
	shared.Lock()
	if s := shared.server; s != nil {
		if err := s.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "pgtest:", err)
		}
	}
	shared.Unlock()
	os.Exit(code)
}

// New returns the connection string of a fresh, empty database, dropped
// (or its server stopped) when the test ends. It skips the test with
// [SkipMessage] when no server binaries are found, and fails it when the
// server cannot be started.
func New(tb testing.TB) string {
	tb.Helper()
	shared.Lock()
	useShared := shared.main || os.Getenv(EnvURL) != ""
	var s *Server
	if useShared {
		if shared.server == nil && shared.err == nil {
			shared.server, shared.err = start(os.Getenv(EnvURL))
		}
		s = shared.server
		err := shared.err
		shared.Unlock()
		if err != nil {
			failOrSkip(tb, err)
		}
	} else {
		shared.Unlock()
		s = Start(tb)
	}
	return s.CreateDatabase(tb)
}

// Start starts a dedicated server, stopped by t.Cleanup. With
// $EXISTENCE_TEST_POSTGRES_URL set, it returns that server instead (never
// stopped). It skips the test with [SkipMessage] when no server binaries
// are found.
func Start(tb testing.TB) *Server {
	tb.Helper()
	s, err := start(os.Getenv(EnvURL))
	if err != nil {
		failOrSkip(tb, err)
	}
	tb.Cleanup(func() {
		if err := s.Stop(); err != nil {
			tb.Error(err)
		}
	})
	return s
}

var errNoBinaries = errors.New(SkipMessage)

func failOrSkip(tb testing.TB, err error) {
	tb.Helper()
	if errors.Is(err, errNoBinaries) {
		tb.Skip(SkipMessage)
	}
	tb.Fatal(err)
}

// URL returns the connection string of database db on s (TCP, loopback).
func (s *Server) URL(db string) string {
	u, _ := url.Parse(s.admin)
	u.Path = "/" + db
	return u.String()
}

// CreateDatabase creates a fresh database with a random name and returns
// its connection string; the database is dropped when the test ends.
func (s *Server) CreateDatabase(tb testing.TB) string {
	tb.Helper()
	var b [6]byte
	_, _ = rand.Read(b[:])
	name := "pgtest_" + hex.EncodeToString(b[:])
	if err := s.exec("CREATE DATABASE " + name + " STRATEGY = FILE_COPY"); err != nil {
		tb.Fatalf("pgtest: create database: %v", err)
	}
	tb.Cleanup(func() {
		s.mu.Lock()
		stopped := s.stopped
		s.mu.Unlock()
		if stopped {
			return
		}
		if err := s.exec("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)"); err != nil {
			tb.Errorf("pgtest: drop database: %v", err)
		}
	})
	return s.URL(name)
}

func (s *Server) exec(sql string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, s.admin)
	if err != nil {
		return err
	}
	defer c.Close(ctx)
	_, err = c.Exec(ctx, sql)
	return err
}

// Stop stops a server started by this package (immediate shutdown) and
// removes its directory. It does nothing for a server given by URL, and
// nothing the second time.
func (s *Server) Stop() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped || s.Dir == "" {
		return nil
	}
	s.stopped = true
	out, err := s.command("pg_ctl", "-D", filepath.Join(s.Dir, "data"), "-m", "immediate", "-w", "stop").CombinedOutput()
	if err != nil {
		err = fmt.Errorf("pgtest: pg_ctl stop: %v: %s", err, out)
	}
	return errors.Join(err, os.RemoveAll(s.Dir))
}

// command returns the server binary name run (as the unprivileged user
// when this process is root).
func (s *Server) command(name string, args ...string) *exec.Cmd {
	argv := append(append(append([]string{}, s.runAs...), filepath.Join(s.bin, name)), args...)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = s.Dir
	cmd.Env = append(os.Environ(), "LC_ALL=C", "LANG=C")
	return cmd
}

// start returns the server named by rawURL, or starts one.
func start(rawURL string) (*Server, error) {
	if rawURL != "" {
		u, err := url.Parse(rawURL)
		if err != nil {
			return nil, fmt.Errorf("pgtest: $%s: %w", EnvURL, err)
		}
		port, _ := strconv.Atoi(u.Port())
		return &Server{Host: u.Hostname(), Port: port, admin: rawURL}, nil
	}
	bin, err := findBin()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "pgtest-")
	if err != nil {
		return nil, fmt.Errorf("pgtest: %w", err)
	}
	s := &Server{Host: "127.0.0.1", Dir: dir, bin: bin}
	fail := func(err error) (*Server, error) {
		os.RemoveAll(dir)
		return nil, err
	}
	if os.Geteuid() == 0 {
		prefix, err := dropPrivileges(dir)
		if err != nil {
			return fail(err)
		}
		s.runAs = prefix
	}
	data := filepath.Join(dir, "data")
	if out, err := s.command("initdb", "-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-locale", "--no-sync").CombinedOutput(); err != nil {
		return fail(fmt.Errorf("pgtest: initdb: %v: %s", err, out))
	}
	var lastErr error
	for range 3 {
		port, err := freePort()
		if err != nil {
			return fail(err)
		}
		opts := strings.Join([]string{
			"-p", strconv.Itoa(port), "-k", dir,
			"-c", "listen_addresses=127.0.0.1",
			"-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
			"-c", "max_connections=400", "-c", "shared_buffers=64MB",
		}, " ")
		out, err := s.command("pg_ctl", "-D", data, "-l", filepath.Join(dir, "server.log"), "-w", "-t", "60", "-o", opts, "start").CombinedOutput()
		if err == nil {
			s.Port = port
			s.admin = fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", port)
			return s, nil
		}
		log, _ := os.ReadFile(filepath.Join(dir, "server.log"))
		lastErr = fmt.Errorf("pgtest: pg_ctl start: %v: %s\n%s", err, out, log)
	}
	return fail(lastErr)
}

// findBin returns the directory holding initdb and pg_ctl: the newest
// /usr/lib/postgresql/*/bin, else the one on $PATH.
func findBin() (string, error) {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return version(dirs[i]) > version(dirs[j]) })
	for _, d := range dirs {
		if isFile(filepath.Join(d, "initdb")) && isFile(filepath.Join(d, "pg_ctl")) {
			return d, nil
		}
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		d := filepath.Dir(p)
		if isFile(filepath.Join(d, "pg_ctl")) {
			return d, nil
		}
	}
	return "", errNoBinaries
}

func version(binDir string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return v
}

func isFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

// dropPrivileges gives dir to the postgres user (or nobody) and returns the
// setpriv prefix that runs a command as that user.
func dropPrivileges(dir string) ([]string, error) {
	var u *user.User
	var err error
	for _, name := range []string{"postgres", "nobody"} {
		if u, err = user.Lookup(name); err == nil {
			break
		}
	}
	if err != nil {
		return nil, fmt.Errorf("pgtest: running as root and no postgres or nobody user to run the server as: %w", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	if err := os.Chown(dir, uid, gid); err != nil {
		return nil, fmt.Errorf("pgtest: %w", err)
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		return nil, fmt.Errorf("pgtest: running as root needs setpriv (util-linux) to start the server as %s: %w", u.Username, err)
	}
	return []string{setpriv, "--reuid=" + u.Uid, "--regid=" + u.Gid, "--clear-groups"}, nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("pgtest: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
