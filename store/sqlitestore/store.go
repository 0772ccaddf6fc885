package sqlitestore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	_ "modernc.org/sqlite" // the "sqlite" database/sql driver, pure Go

	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/task"
)

// Options configure a [Store]. The zero value gives the defaults.
type Options struct {
	// Now stamps AgentState.UpdatedAt on Save, lock leases and quarantines.
	// Nil means [time.Now].
	Now func() time.Time
	// MaxBatch is the most saves one group commit writes in one
	// transaction; zero or negative means 512.
	MaxBatch int
	// LeaseTTL is how long a lock ([Store.Lock]) lasts without renewal;
	// the store renews its locks every LeaseTTL/3 while it is open. A
	// lock whose holder died lapses then, or at once when the holder was
	// a process of this host that no longer exists. Zero or negative
	// means 30 s.
	LeaseTTL time.Duration
	// ReadConns is the number of connections used for reads (WAL lets
	// them run beside the writer); zero or negative means 4.
	ReadConns int
	// Logger receives reports (a lapsed lock taken over). Nil means
	// [slog.Default].
	Logger *slog.Logger
	// TaskLimits caps the task queue ([Store.Tasks]): how long an
	// assigned task may go without a result, the description and result
	// lengths, and how many ended tasks are kept. Zero fields take the
	// defaults of [task.Limits].
	TaskLimits task.Limits
}

func (o Options) withDefaults() Options {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.MaxBatch <= 0 {
		o.MaxBatch = 512
	}
	if o.LeaseTTL <= 0 {
		o.LeaseTTL = 30 * time.Second
	}
	if o.ReadConns <= 0 {
		o.ReadConns = 4
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return o
}

// ErrClosed is returned by the methods of a closed [Store].
var ErrClosed = errors.New("sqlitestore: store is closed")

// Store is an [identity.Store] that keeps every agent's state, the task
// queue ([Store.Tasks]) and the agents' unread peer and host messages in
// one SQLite database file. Open one with [Open]; it is safe
// for concurrent use, and several processes may open the same file.
//
// Saves are durable when they return: the database is in WAL mode with
// synchronous=FULL, and saves that arrive together share one transaction
// and one fsync (group commit), each caller returning once the commit that
// holds its save is on disk. A save writes the agents row and only the
// goal, discovery and message rows that changed.
//
// The promises are those of the file store (store/filestore): one
// process per agent
// ([Store.Lock]: a lease row naming its holder); a stored state that
// cannot be decoded is named in a [*identity.CorruptError] and never
// replaced silently (Save refuses until [Store.Quarantine]); a database of
// a newer schema is refused by [Open] with [identity.ErrFutureVersion].
// Like every store it returns what is stored, over-cap lists included; the
// agent trims them with [identity.Identity.Enforce] on load.
type Store struct {
	path   string
	opts   Options
	wdb    *sql.DB // one connection: the group-commit writer, locks, tasks
	rdb    *sql.DB // read connections
	host   string
	holder string
	log    *slog.Logger

	reqs   chan *saveReq
	quit   chan struct{}
	done   sync.WaitGroup
	closed sync.Once

	mu     sync.Mutex
	agents map[string]*entry
	held   map[string]bool // agents locked through this store

	tasks *Queue

	stmt  *stmts     // write statements, prepared once on wdb
	rstmt *readStmts // read statements, prepared once on rdb

	nSaves, nCommits, nRows atomic.Int64
}

// entry is the in-process state of one agent.
type entry struct {
	mu sync.Mutex // serialises Load, Save and Quarantine of the agent
	// c is what the store last read or wrote; nil until then.
	c *cache
	// unusable is the error of the last read that found the stored state
	// unusable; Save refuses while it is set.
	unusable error
}

var (
	_ identity.Store       = (*Store)(nil)
	_ identity.Locker      = (*Store)(nil)
	_ identity.Quarantiner = (*Store)(nil)
)

// Open opens (creating when missing) the SQLite database at path, with
// permission 0600, sets WAL mode, migrates an older schema to
// [SchemaVersion] and starts the group-commit writer. Close it with
// [Store.Close].
//
// Errors: an error for an empty path, a path holding '?' or that is not a
// regular file (a directory, FIFO, socket or device is refused at once); an
// error wrapping [identity.ErrFutureVersion] for a database of a newer
// schema; an error naming the file when it is not a SQLite database.
func Open(ctx context.Context, path string, opts Options) (*Store, error) {
	if path == "" {
		return nil, errors.New("sqlitestore: empty database path")
	}
	if strings.ContainsAny(path, "?#") {
		return nil, fmt.Errorf("sqlitestore: database path %q: '?' and '#' are not allowed", path)
	}
	path = filepath.Clean(path)
	if err := checkRegular(path); err != nil {
		return nil, err
	}
	opts = opts.withDefaults()
	host, _ := os.Hostname()
	s := &Store{
		path: path, opts: opts, log: opts.Logger,
		host:   host,
		holder: fmt.Sprintf("%s:%d:%x", host, os.Getpid(), time.Now().UnixNano()),
		reqs:   make(chan *saveReq, opts.MaxBatch),
		quit:   make(chan struct{}),
		agents: map[string]*entry{},
		held:   map[string]bool{},
	}
	// Create the file 0600 before SQLite does (it would use 0644).
	if f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600); err == nil {
		f.Close()
	}
	q := url.Values{}
	for _, p := range []string{"journal_mode(WAL)", "synchronous(FULL)", "busy_timeout(10000)", "foreign_keys(ON)"} {
		q.Add("_pragma", p)
	}
	q.Set("_txlock", "immediate")
	var err error
	if s.wdb, err = sql.Open("sqlite", path+"?"+q.Encode()); err != nil {
		return nil, fmt.Errorf("sqlitestore: %s: %w", path, err)
	}
	s.wdb.SetMaxOpenConns(1)
	s.wdb.SetConnMaxIdleTime(0)
	s.wdb.SetConnMaxLifetime(0)
	if err := s.wdb.PingContext(ctx); err != nil {
		s.wdb.Close()
		return nil, fmt.Errorf("sqlitestore: opening %s: %w", path, err)
	}
	if err := migrate(ctx, s.wdb, path); err != nil {
		s.wdb.Close()
		if errors.Is(err, identity.ErrFutureVersion) {
			return nil, err
		}
		if strings.Contains(err.Error(), "file is not a database") {
			return nil, &identity.CorruptError{Path: path, Reason: "not a SQLite database (file is not a database)", Err: err}
		}
		return nil, err
	}
	if err := s.prepareAll(ctx); err != nil {
		s.wdb.Close()
		return nil, err
	}
	rq := url.Values{}
	rq.Add("_pragma", "busy_timeout(10000)")
	rq.Add("_pragma", "query_only(1)")
	// No mmap_size: a memory map would save about a sixth of the CPU of
	// loading 10,000 agents, but turn an I/O error or a file truncated by
	// another process into a crash (SIGBUS) instead of an error.
	if s.rdb, err = sql.Open("sqlite", path+"?"+rq.Encode()); err != nil {
		s.wdb.Close()
		return nil, fmt.Errorf("sqlitestore: %s: %w", path, err)
	}
	s.rdb.SetMaxOpenConns(opts.ReadConns)
	s.rdb.SetMaxIdleConns(opts.ReadConns)
	if s.rstmt, err = prepareReads(ctx, s.rdb); err != nil {
		err = fmt.Errorf("sqlitestore: opening %s: %w", path, err)
		return nil, errors.Join(err, s.stmt.close(), s.rdb.Close(), s.wdb.Close())
	}
	s.tasks = &Queue{s: s}
	s.done.Add(2)
	go s.writer()
	go s.renewer()
	return s, nil
}

// checkRegular refuses a path that exists and is not a regular file,
// without opening it (stat never blocks on a FIFO).
func checkRegular(path string) error {
	st, err := os.Stat(path)
	if err != nil || st.Mode().IsRegular() {
		return nil
	}
	return fmt.Errorf("sqlitestore: %s is not a regular file (%s); refused", path, st.Mode().Type())
}

// Stats counts the work of a [Store] since [Open].
type Stats struct {
	// Saves is the number of saves committed.
	Saves int64
	// Commits is the number of group commits (transactions, each one
	// fsync) that wrote them; Saves/Commits is the mean batch.
	Commits int64
	// Rows is the number of goal, discovery and message rows written
	// or deleted (the agents rows not counted): a save writes only what
	// changed.
	Rows int64
}

// Stats returns the store's counters.
func (s *Store) Stats() Stats {
	return Stats{Saves: s.nSaves.Load(), Commits: s.nCommits.Load(), Rows: s.nRows.Load()}
}

// Path returns the database file.
func (s *Store) Path() string { return s.path }

// DB returns the store's read-only connection pool, for queries such as
// `SELECT name, load FROM agents ORDER BY load DESC`. Writes through it
// fail (query_only).
func (s *Store) DB() *sql.DB { return s.rdb }

// Tasks returns the task queue kept in the same database.
func (s *Store) Tasks() *Queue { return s.tasks }

// Close releases the locks this store holds, stops the writer after the
// saves already queued, and closes the database. Later calls return nil.
func (s *Store) Close() error {
	var err error
	s.closed.Do(func() {
		close(s.quit)
		s.done.Wait()
		s.mu.Lock()
		held := make([]string, 0, len(s.held))
		for id := range s.held {
			held = append(held, id)
		}
		s.held = map[string]bool{}
		s.mu.Unlock()
		var errs []error
		for _, id := range held {
			_, e := s.wdb.Exec("DELETE FROM locks WHERE agent_id = ? AND holder = ?", id, s.holder)
			errs = append(errs, e)
		}
		errs = append(errs, s.rstmt.close(), s.stmt.close(), s.rdb.Close(), s.wdb.Close())
		err = errors.Join(errs...)
	})
	return err
}

func (s *Store) entry(id string) *entry {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.agents[id]
	if e == nil {
		e = &entry{}
		s.agents[id] = e
	}
	return e
}

func (s *Store) isClosed() bool {
	select {
	case <-s.quit:
		return true
	default:
		return false
	}
}

// rowName names an agent's stored state in errors: "PATH agents[ID]".
func (s *Store) rowName(id string) string { return fmt.Sprintf("%s agents[%s]", s.path, id) }

// Load implements [identity.Store]: it reads agentID's row and its goal,
// discovery and message rows, and returns a state the caller owns.
//
// Errors: [identity.ErrInvalidID]; [identity.ErrNotFound]; a
// [*identity.CorruptError] naming the row ("PATH agents[ID]") and the
// column or child row that cannot be decoded; ctx's error; [ErrClosed].
// After a CorruptError, Save refuses to replace the state until it is
// quarantined.
func (s *Store) Load(ctx context.Context, agentID string) (*identity.AgentState, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := identity.ValidateID(agentID); err != nil {
		return nil, err
	}
	if s.isClosed() {
		return nil, ErrClosed
	}
	e := s.entry(agentID)
	e.mu.Lock()
	defer e.mu.Unlock()
	st, c, err := s.read(ctx, agentID)
	switch {
	case err == nil:
		e.c, e.unusable = c, nil
	case errors.Is(err, identity.ErrNotFound):
		e.c, e.unusable = &cache{}, nil
	case errors.Is(err, identity.ErrCorrupt):
		e.c, e.unusable = nil, err
	default:
		e.c = nil
	}
	return st, err
}

// read reads and decodes agentID's rows in one read transaction.
func (s *Store) read(ctx context.Context, id string) (*identity.AgentState, *cache, error) {
	tx, err := s.rdb.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, nil, s.ioErr(ctx, "reading", id, err)
	}
	defer tx.Rollback()
	corrupt := func(err error, format string, args ...any) error {
		return &identity.CorruptError{Path: s.rowName(id), Reason: fmt.Sprintf(format, args...), Err: err}
	}
	var (
		r       agentRow
		version int64
	)
	err = tx.StmtContext(ctx, s.rstmt.agent).QueryRowContext(ctx, id).Scan(&r.name, &r.worldview, &r.narrative, &r.crisis, &r.identity, &r.suffering, &r.createdAt, &r.updatedAt, &version, &r.lastPresence, &r.slots, &r.extra)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil, fmt.Errorf("%w for agent %q (no row in %s)", identity.ErrNotFound, id, s.path)
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, nil, ctx.Err()
		}
		return nil, nil, corrupt(err, "agents row: %v", err)
	}
	st := &identity.AgentState{}
	ident := &st.Identity
	ident.AgentID, ident.Name, ident.Worldview, ident.Narrative = id, r.name, r.worldview, r.narrative
	var doc identityDoc
	if err := json.Unmarshal([]byte(r.identity), &doc); err != nil {
		return nil, nil, corrupt(err, "column identity: %v", err)
	}
	ident.Traits, ident.Domains, ident.Opinions, ident.Questions = doc.Traits, doc.Domains, doc.Opinions, doc.Questions
	if st.Suffering, err = decodeSuffering(r.suffering); err != nil {
		return nil, nil, corrupt(err, "column suffering: %v", err)
	}
	if ident.CreatedAt, err = parseTime(r.createdAt); err != nil {
		return nil, nil, corrupt(err, "column created_at: %v", err)
	}
	if st.UpdatedAt, err = parseTime(sql.NullString{String: r.updatedAt, Valid: true}); err != nil {
		return nil, nil, corrupt(err, "column updated_at: %v", err)
	}
	if st.LastPresence, err = parseTime(r.lastPresence); err != nil {
		return nil, nil, corrupt(err, "column last_presence: %v", err)
	}
	if r.slots.Valid && r.slots.String != "" {
		if err := json.Unmarshal([]byte(r.slots.String), &st.Slots); err != nil {
			return nil, nil, corrupt(err, "column slots: %v", err)
		}
	}
	if r.extra.Valid && r.extra.String != "" {
		var x stateExtra
		if err := json.Unmarshal([]byte(r.extra.String), &x); err != nil {
			return nil, nil, corrupt(err, "column extra: %v", err)
		}
		st.WorkingMemory, st.WorkingMemoryNote, st.Commissioned = x.WorkingMemory, x.WorkingMemoryNote, x.Commissioned
	}
	c := &cache{exists: true, version: version}

	rows, err := tx.StmtContext(ctx, s.rstmt.goals).QueryContext(ctx, id)
	if err != nil {
		return nil, nil, s.ioErr(ctx, "reading", id, err)
	}
	for rows.Next() {
		var (
			g                 identity.Goal
			seq               int64
			started, ended    sql.NullString
			broken, artifacts sql.NullString
			status            string
			fallback          bool
		)
		if err := rows.Scan(&seq, &g.ID, &g.Objective, &status, &started, &ended, &g.Outcome, &g.TaskID, &fallback, &g.Cause, &broken, &artifacts); err != nil {
			rows.Close()
			return nil, nil, corrupt(err, "goals row %d: %v", seq, err)
		}
		g.Status, g.Fallback = identity.GoalStatus(status), fallback
		if g.Started, err = parseTime(started); err == nil {
			g.Ended, err = parseTime(ended)
		}
		if err == nil && broken.Valid {
			err = json.Unmarshal([]byte(broken.String), &g.BrokenTools)
		}
		if err == nil && artifacts.Valid {
			err = json.Unmarshal([]byte(artifacts.String), &g.Artifacts)
		}
		if err != nil {
			rows.Close()
			return nil, nil, corrupt(err, "goals row %d: %v", seq, err)
		}
		ident.Goals = append(ident.Goals, g)
		c.goals = append(c.goals, seqd[identity.Goal]{seq, g})
	}
	if err := rows.Close(); err != nil {
		return nil, nil, s.ioErr(ctx, "reading", id, err)
	}
	if err := rows.Err(); err != nil {
		return nil, nil, s.ioErr(ctx, "reading", id, err)
	}

	rows, err = tx.StmtContext(ctx, s.rstmt.discoveries).QueryContext(ctx, id)
	if err != nil {
		return nil, nil, s.ioErr(ctx, "reading", id, err)
	}
	for rows.Next() {
		var (
			d   identity.Discovery
			seq int64
			at  sql.NullString
		)
		err := rows.Scan(&seq, &d.Text, &d.Source, &at)
		if err == nil {
			d.At, err = parseTime(at)
		}
		if err != nil {
			rows.Close()
			return nil, nil, corrupt(err, "discoveries row %d: %v", seq, err)
		}
		ident.Discoveries = append(ident.Discoveries, d)
		c.discoveries = append(c.discoveries, seqd[identity.Discovery]{seq, d})
	}
	if err := rows.Close(); err != nil {
		return nil, nil, s.ioErr(ctx, "reading", id, err)
	}

	rows, err = tx.StmtContext(ctx, s.rstmt.messages).QueryContext(ctx, id)
	if err != nil {
		return nil, nil, s.ioErr(ctx, "reading", id, err)
	}
	for rows.Next() {
		var (
			m   identity.AgentMessage
			box string
			seq int64
			at  sql.NullString
		)
		err := rows.Scan(&box, &seq, &m.From, &m.Text, &at)
		if err == nil {
			m.At, err = parseTime(at)
		}
		if err != nil {
			rows.Close()
			return nil, nil, corrupt(err, "messages row %s/%d: %v", box, seq, err)
		}
		if box == "host" {
			st.Host = append(st.Host, m)
			c.host = append(c.host, seqd[identity.AgentMessage]{seq, m})
		} else {
			st.Inbox = append(st.Inbox, m)
			c.inbox = append(c.inbox, seqd[identity.AgentMessage]{seq, m})
		}
	}
	if err := rows.Close(); err != nil {
		return nil, nil, s.ioErr(ctx, "reading", id, err)
	}
	if err := st.Validate(); err != nil {
		return nil, nil, corrupt(err, "invalid state: %v", err)
	}
	return st, c, nil
}

// ioErr wraps a database error of an operation on agent id, preferring
// ctx's error when ctx ended.
func (s *Store) ioErr(ctx context.Context, op, id string, err error) error {
	if cerr := ctx.Err(); cerr != nil {
		return cerr
	}
	return fmt.Errorf("sqlitestore: %s %s: %w", op, s.rowName(id), err)
}

// Save implements [identity.Store]: it stores s as agent s.Identity.AgentID's
// state and returns once the transaction holding it is committed and
// fsynced. Saves from many goroutines that arrive while a commit is in
// progress share the next one (group commit). The stored copy's UpdatedAt
// is Options.Now(); s is not modified.
//
// Errors: [identity.ErrInvalidID] or [suffering.ErrInvalid] when s does
// not validate; when the stored state is unusable (a Load found it so, or
// Save did before its first write of the agent), an error that says
// "quarantine it first" and wraps the [*identity.CorruptError]; ctx's
// error when ctx ends before the save is written (nothing is stored then);
// [ErrClosed]; a database error.
func (s *Store) Save(ctx context.Context, st *identity.AgentState) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if st == nil {
		return errors.New("sqlitestore: Save of a nil state")
	}
	if err := st.Validate(); err != nil {
		return err
	}
	if s.isClosed() {
		return ErrClosed
	}
	enc, err := encodeState(st, s.opts.Now().UTC())
	if err != nil {
		return fmt.Errorf("sqlitestore: encoding state of %q: %w", st.Identity.AgentID, err)
	}
	id := enc.id
	e := s.entry(id)
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.c == nil && e.unusable == nil {
		// First write of this agent by this store: read what is stored, so
		// that a corrupt state is not replaced unseen (and to diff).
		_, c, err := s.read(ctx, id)
		switch {
		case err == nil:
			e.c = c
		case errors.Is(err, identity.ErrNotFound):
			e.c = &cache{}
		case errors.Is(err, identity.ErrCorrupt):
			e.unusable = err
		default:
			return err
		}
	}
	if e.unusable != nil {
		return fmt.Errorf("sqlitestore: refusing to overwrite the unusable state %s; quarantine it first (Store.Quarantine): %w",
			s.rowName(id), e.unusable)
	}
	req := &saveReq{ctx: ctx, enc: enc, base: e.c, done: make(chan saveRes, 1)}
	select {
	case s.reqs <- req:
	case <-ctx.Done():
		return ctx.Err()
	case <-s.quit:
		return ErrClosed
	}
	res := <-req.done
	if res.err != nil {
		e.c = nil // unknown: read again before the next diff
		return res.err
	}
	e.c = res.c
	return nil
}

// List implements [identity.Store]: the ids of the stored agents, sorted.
func (s *Store) List(ctx context.Context) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if s.isClosed() {
		return nil, ErrClosed
	}
	rows, err := s.rstmt.list.QueryContext(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("sqlitestore: listing %s: %w", s.path, err)
	}
	defer rows.Close()
	ids := []string{}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("sqlitestore: listing %s: %w", s.path, err)
		}
		if identity.ValidateID(id) == nil {
			ids = append(ids, id)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlitestore: listing %s: %w", s.path, err)
	}
	return ids, nil
}

// Quarantine moves agentID's rows (the agents row, its goals, discoveries
// and messages) into the quarantine table, raw, as JSON, and returns where
// they went: "PATH quarantine[N]". Nothing is deleted: a person can read
// them with `SELECT * FROM quarantine`. Afterwards Save may write a new
// state for agentID.
//
// Errors: [identity.ErrInvalidID]; [identity.ErrNotFound] when there is no
// row; a database error.
func (s *Store) Quarantine(agentID string) (string, error) {
	if err := identity.ValidateID(agentID); err != nil {
		return "", err
	}
	if s.isClosed() {
		return "", ErrClosed
	}
	e := s.entry(agentID)
	e.mu.Lock()
	defer e.mu.Unlock()
	ctx := context.Background()
	tx, err := s.wdb.BeginTx(ctx, nil)
	if err != nil {
		return "", fmt.Errorf("sqlitestore: quarantine %s: %w", s.rowName(agentID), err)
	}
	defer tx.Rollback()
	var qid int64
	err = tx.QueryRowContext(ctx, `INSERT INTO quarantine (agent_id, at, agent, goals, discoveries, messages)
		SELECT a.id, ?,
			json_object('name', a.name, 'load', a.load, 'crisis_cycles', a.crisis_cycles, 'active_goal', a.active_goal,
				'worldview', a.worldview, 'narrative', a.narrative, 'identity', a.identity, 'suffering', a.suffering,
				'created_at', a.created_at, 'updated_at', a.updated_at, 'version', a.version, 'last_presence', a.last_presence,
				'slots', a.slots, 'extra', a.extra),
			(SELECT json_group_array(json_object('seq', seq, 'goal_id', goal_id, 'objective', objective, 'status', status,
				'started', started, 'ended', ended, 'outcome', outcome, 'task_id', task_id, 'fallback', fallback,
				'cause', cause, 'broken_tools', broken_tools, 'artifacts', artifacts)) FROM goals WHERE agent_id = a.id),
			(SELECT json_group_array(json_object('seq', seq, 'text', text, 'source', source, 'at', at)) FROM discoveries WHERE agent_id = a.id),
			(SELECT json_group_array(json_object('box', box, 'seq', seq, 'sender', sender, 'text', text, 'at', at)) FROM messages WHERE agent_id = a.id)
		FROM agents a WHERE a.id = ? RETURNING qid`, s.opts.Now().UTC().Format(time.RFC3339Nano), agentID).Scan(&qid)
	if errors.Is(err, sql.ErrNoRows) {
		return "", fmt.Errorf("%w for agent %q: nothing to quarantine in %s", identity.ErrNotFound, agentID, s.path)
	}
	if err != nil {
		return "", fmt.Errorf("sqlitestore: quarantine %s: %w", s.rowName(agentID), err)
	}
	for _, t := range []string{"agents WHERE id = ?", "goals WHERE agent_id = ?", "discoveries WHERE agent_id = ?", "messages WHERE agent_id = ?"} {
		if _, err := tx.ExecContext(ctx, "DELETE FROM "+t, agentID); err != nil {
			return "", fmt.Errorf("sqlitestore: quarantine %s: %w", s.rowName(agentID), err)
		}
	}
	if err := tx.Commit(); err != nil {
		return "", fmt.Errorf("sqlitestore: quarantine %s: %w", s.rowName(agentID), err)
	}
	e.c, e.unusable = &cache{}, nil
	return fmt.Sprintf("%s quarantine[%d]", s.path, qid), nil
}
