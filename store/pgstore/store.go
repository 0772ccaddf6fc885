package pgstore

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/lease"
)

// Defaults of [Options].
const (
	// DefaultTTL is how long a lease lasts unless renewed: 15 s, so that
	// a holder renewing every 5 s (runner.DefaultRenewEvery, TTL/3)
	// survives two missed renewals, and a dead one's agents move within
	// 15 s. See "Leases and fencing" in the package documentation.
	DefaultTTL = 15 * time.Second
	// DefaultConnectTimeout bounds the one connection attempt of [Open].
	DefaultConnectTimeout = 10 * time.Second
	// DefaultMaxBatch is the most saves (or task probes) one group
	// commit carries: 256, about 1 MiB of typical agent states, written
	// in tens of milliseconds.
	DefaultMaxBatch = 256
	// DefaultMaxWait is how long a group commit under load waits for
	// more saves: 5 ms. See "Group commit" in the package documentation.
	DefaultMaxWait = 5 * time.Millisecond
	// leaseConns is the size of the connection pool reserved for the
	// leases (claims, renewals, releases), apart from the saves'.
	leaseConns = 2
)

// Options configure a [Store]. The zero value gives the defaults.
type Options struct {
	// Owner names this process in the leases it takes, e.g. "host-a:4242";
	// default "{hostname}:{pid}". The leases view shows it with the host
	// and pid.
	Owner string
	// TTL is how long a lease lasts after it was claimed or last renewed;
	// default 15 s. Renew well within it (a third of it is usual).
	TTL time.Duration
	// ClaimBatch caps how many agents one [Store.Claim] leases, whatever
	// its max; 0 means no cap. Processes that start together spread the
	// agents between them with a cap (each claims a batch per renewal
	// round) instead of the first one taking its maximum at once.
	ClaimBatch int
	// ConnectTimeout bounds the single connection attempt of [Open];
	// default 10 s.
	ConnectTimeout time.Duration
	// MaxConns is the size of the connection pool of the saves, loads,
	// task queue and messages; 0 means pgxpool's default (the larger of 4
	// and the number of CPUs). Two more connections are reserved for the
	// leases (claims, renewals, releases), so that no load of saves can
	// keep a renewal waiting for a connection.
	MaxConns int32
	// MaxBatch is the most saves one group commit writes in one statement
	// (one transaction), and the most [Queue.Next] calls one shared probe
	// answers; default [DefaultMaxBatch] (256). 1 turns group commit off:
	// every save is then its own statement, run at once by its caller.
	MaxBatch int
	// MaxWait is how long a group commit waits for more saves before it
	// writes, and only under load: when the previous commit carried more
	// than one save, or several are queued. A save that finds the writer
	// idle and nothing queued is written at once, so a handful of agents
	// never wait. Default [DefaultMaxWait] (5 ms); negative: never wait
	// (a batch then holds what queued while the previous one was written).
	MaxWait time.Duration
	// LateMargin is the renewal alarm: a lease renewed with less than
	// LateMargin of its TTL left counts as late ([Stats].LeasesLate, and
	// [Store.LateRenewals], which a runner.Runner reports as
	// lease_late events); default TTL/3. See "Leases and fencing" in the
	// package documentation.
	LateMargin time.Duration
	// Now is the clock of the lease deadlines this process keeps (a write
	// is fenced by its own clock once TTL has passed since the last
	// claim or renewal, and the margins of [Stats] are measured with it)
	// and of the task queue's empty-queue window (see [Queue.Next]);
	// default time.Now. The server's clock decides expiry in the
	// database.
	Now func() time.Time
	// MaxBytes is the size limit of one state document in bytes; default
	// [identity.DefaultMaxBytes] (4 MiB). Larger states are refused with
	// [identity.ErrTooLarge].
	MaxBytes int
	// TaskTimeout is how long an assigned task may go without a result
	// before it is failed; default [task.DefaultTimeout] (2 h).
	TaskTimeout time.Duration
	// MaxDescription and MaxResult cut task descriptions and results, in
	// characters; default [task.DefaultMaxDescription] and
	// [task.DefaultMaxResult] (2000 each).
	MaxDescription int
	MaxResult      int
	// Logger receives diagnostics; default slog.Default().
	Logger *slog.Logger
}

func (o Options) withDefaults() Options {
	if o.TTL <= 0 {
		o.TTL = DefaultTTL
	}
	if o.ConnectTimeout <= 0 {
		o.ConnectTimeout = DefaultConnectTimeout
	}
	if o.MaxBytes <= 0 {
		o.MaxBytes = identity.DefaultMaxBytes
	}
	if o.TaskTimeout <= 0 {
		o.TaskTimeout = 2 * time.Hour
	}
	if o.MaxDescription <= 0 {
		o.MaxDescription = 2000
	}
	if o.MaxResult <= 0 {
		o.MaxResult = 2000
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.MaxBatch <= 0 {
		o.MaxBatch = DefaultMaxBatch
	}
	if o.MaxWait == 0 {
		o.MaxWait = DefaultMaxWait
	}
	if o.LateMargin <= 0 {
		o.LateMargin = o.TTL / 3
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

// Store keeps agent states, leases, the task queue and messages in one
// PostgreSQL database. It implements [identity.Store], [identity.Locker]
// and [lease.Manager]; [Store.Tasks] is its [task.Source]. Open
// it with [Open]; it is safe for concurrent use. Close it with
// [Store.Close].
type Store struct {
	pool   *pgxpool.Pool // saves, loads, the task queue, messages
	lpool  *pgxpool.Pool // the leases: claims, renewals, releases
	opts   Options
	host   string
	pid    int
	owner  string
	tasks  *Queue
	saves  *gatherer[*saveReq]  // nil with MaxBatch 1
	probes *gatherer[*probeReq] // nil with MaxBatch 1

	count      counters
	margins    *marginWindow
	emptyQueue emptyCache // the task queue known to hold no open task
	enrolled   sync.Map   // agent ids known to have a lease row

	mu   sync.Mutex
	held map[string]*held             // the leases this Store holds, by agent id
	late map[string]lease.LateRenewal // renewed late, not yet reported

	closeOnce sync.Once
	deliverMu sync.Mutex // serialises DeliverPending
}

// held is one lease this Store holds.
type held struct {
	epoch    int64
	deadline time.Time     // when the lease runs out by this process's clock
	lost     bool          // taken over, expired or released: writes are fenced
	released bool          // given up by Release
	locked   bool          // Lock was called on it
	stop     chan struct{} // closes Lock's renewer
	inflight []Message     // messages handed to the agent, not yet acknowledged
}

var (
	_ identity.Store       = (*Store)(nil)
	_ identity.Locker      = (*Store)(nil)
	_ identity.Quarantiner = (*Store)(nil)
	_ lease.Manager        = (*Store)(nil)
)

// Open connects to the database named by connString (a URL such as
// "postgres://user:pass@host:5432/db?sslmode=disable" or a key=value
// string), makes one connection attempt bounded by Options.ConnectTimeout,
// and brings the schema up to date under an advisory lock, so that any
// number of processes may start at once.
//
// Errors, each returned at once and without retrying: [ErrConfig] for a
// connection string that does not parse; [ErrUnreachable] when the server
// cannot be reached or refuses the login; [ErrSchemaTooNew] when the
// database was migrated by a newer version of this package.
func Open(ctx context.Context, connString string, opts Options) (*Store, error) {
	opts = opts.withDefaults()
	cfg, err := pgxpool.ParseConfig(connString)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	cfg.ConnConfig.ConnectTimeout = opts.ConnectTimeout
	if opts.MaxConns > 0 {
		cfg.MaxConns = opts.MaxConns
	}
	s := &Store{opts: opts, pid: os.Getpid(), held: map[string]*held{}, late: map[string]lease.LateRenewal{}}
	lcfg := cfg.Copy()
	lcfg.MaxConns, lcfg.MinConns = leaseConns, 1
	cfg.ConnConfig.Tracer = tracer{n: &s.count.roundTrips}
	lcfg.ConnConfig.Tracer = tracer{n: &s.count.roundTrips, also: &s.count.leaseRoundTrips}
	where := fmt.Sprintf("%s:%d/%s", cfg.ConnConfig.Host, cfg.ConnConfig.Port, cfg.ConnConfig.Database)
	if s.pool, err = pgxpool.NewWithConfig(ctx, cfg); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	if s.lpool, err = pgxpool.NewWithConfig(ctx, lcfg); err != nil {
		s.pool.Close()
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	pctx, cancel := context.WithTimeout(ctx, opts.ConnectTimeout)
	defer cancel()
	if err := s.pool.Ping(pctx); err != nil {
		s.pool.Close()
		s.lpool.Close()
		return nil, fmt.Errorf("%w %s: %w", ErrUnreachable, where, err)
	}
	s.host, _ = os.Hostname()
	s.owner = opts.Owner
	if s.owner == "" {
		s.owner = s.host + ":" + strconv.Itoa(s.pid)
	}
	s.tasks = &Queue{s: s, epoch: -1}
	s.margins = newMarginWindow(opts.TTL)
	if err := migrate(ctx, s.pool); err != nil {
		s.pool.Close()
		s.lpool.Close()
		return nil, err
	}
	if opts.MaxBatch > 1 {
		s.saves = newGatherer(opts.MaxBatch, opts.MaxWait, s.flushSaves)
		s.probes = newGatherer(opts.MaxBatch, opts.MaxWait, s.flushProbes)
	}
	return s, nil
}

// Close stops the renewers of [Store.Lock], writes the saves already
// queued for a group commit, and closes the connection pools. Saves
// after Close fail with [ErrClosed]. It does not release leases: call
// [Store.Release] first for a graceful shutdown. Later calls do nothing.
func (s *Store) Close() {
	s.closeOnce.Do(func() {
		s.mu.Lock()
		for _, h := range s.held {
			if h.stop != nil {
				close(h.stop)
				h.stop = nil
			}
		}
		s.mu.Unlock()
		if s.saves != nil {
			s.saves.close()
			s.probes.close()
		}
		s.pool.Close()
		s.lpool.Close()
	})
}

// Owner returns the name this Store gives its leases ([Options].Owner).
func (s *Store) Owner() string { return s.owner }

// Pool returns the connection pool, for applications that keep their own
// tables in the same database.
func (s *Store) Pool() *pgxpool.Pool { return s.pool }

// Tasks returns the task queue kept in the database.
func (s *Store) Tasks() *Queue { return s.tasks }

// fenceOf returns the epoch to check the writes of agentID against: the
// epoch of the lease this Store holds, or -1 when it holds none (the write
// is then allowed only while no live lease exists). It returns a
// [*FencedError] when the lease was lost.
func (s *Store) fenceOf(agentID string) (int64, error) { return s.fenceAt(agentID, -1) }

// fenceAt is fenceOf for a writer bound to the lease of epoch want ([Fenced]);
// want < 0 means whatever this Store holds. A writer bound to an older
// epoch than the one held (an agent dropped and claimed again) is fenced
// too.
func (s *Store) fenceAt(agentID string, want int64) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	h, ok := s.held[agentID]
	if want >= 0 && (!ok || h.epoch != want) {
		return 0, &FencedError{AgentID: agentID, Epoch: want}
	}
	if !ok {
		return -1, nil
	}
	if h.lost || s.opts.Now().After(h.deadline) {
		return 0, &FencedError{AgentID: agentID, Epoch: h.epoch}
	}
	return h.epoch, nil
}

// markLost records that the lease of agentID (at epoch) is gone.
func (s *Store) markLost(agentID string, epoch int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if h, ok := s.held[agentID]; ok && h.epoch == epoch {
		s.loseLocked(h)
	}
}

// loseLocked marks h lost, counted once; s.mu must be held.
func (s *Store) loseLocked(h *held) {
	if !h.lost && !h.released {
		s.count.lost.Add(1)
	}
	h.lost = true
}

// fenceError builds the error for a write refused by the fence: who holds
// the agent now, as far as the database says.
func (s *Store) fenceError(ctx context.Context, agentID string, epoch int64) error {
	if epoch >= 0 {
		s.markLost(agentID, epoch)
	}
	e := &FencedError{AgentID: agentID, Epoch: epoch}
	var owner *string
	var pid *int32
	err := s.pool.QueryRow(ctx, `SELECT epoch, owner, pid FROM existence_leases
		WHERE agent_id = $1 AND owner IS NOT NULL AND expires_at > now()`, agentID).Scan(&e.HolderEpoch, &owner, &pid)
	if err == nil {
		if owner != nil {
			e.Holder = *owner
		}
		if pid != nil {
			e.HolderPID = int(*pid)
		}
	}
	return e
}

// ensureAgent adds agentID to the population (an unowned lease row), so
// that it can be leased and fenced. Lease rows are never deleted, so an
// agent known to have one is not asked for again.
func (s *Store) ensureAgent(ctx context.Context, agentID string) error {
	if _, ok := s.enrolled.Load(agentID); ok {
		return nil
	}
	_, err := s.pool.Exec(ctx, `INSERT INTO existence_leases (agent_id) VALUES ($1) ON CONFLICT DO NOTHING`, agentID)
	if err != nil {
		return fmt.Errorf("pgstore: %w", err)
	}
	s.enrolled.Store(agentID, true)
	return nil
}

// Load implements [identity.Store]: it returns the stored state of
// agentID. Errors: [identity.ErrInvalidID]; [identity.ErrNotFound];
// [identity.ErrFutureVersion] for a document of a newer version;
// [identity.ErrCorrupt] (a [*identity.CorruptError] whose Path is
// "postgres:existence_states/{id}") when the stored document cannot be
// used; the database's error.
func (s *Store) Load(ctx context.Context, agentID string) (*identity.AgentState, error) {
	if err := identity.ValidateID(agentID); err != nil {
		return nil, err
	}
	var doc []byte
	var version int
	var sumOK bool
	err := s.pool.QueryRow(ctx, `SELECT doc, doc_version, sha256(doc) = doc_sha256 FROM existence_states WHERE agent_id = $1`, agentID).Scan(&doc, &version, &sumOK)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("%w: %s", identity.ErrNotFound, agentID)
	}
	if err != nil {
		return nil, fmt.Errorf("pgstore: load %s: %w", agentID, err)
	}
	st, err := decode(agentID, version, doc)
	if err == nil && !sumOK {
		return nil, &identity.CorruptError{Path: rowPath(agentID), Reason: "the stored document was changed outside the store (checksum mismatch)"}
	}
	return st, err
}

// rowPath names an agent's row in errors.
func rowPath(agentID string) string { return "postgres:existence_states/" + agentID }

// Quarantine implements [identity.Quarantiner]: it moves agentID's stored
// document, usable or not, to the table existence_quarantine (nothing is
// deleted) and returns where it went, "postgres:existence_quarantine/{n}".
// Errors: [identity.ErrInvalidID]; [identity.ErrNotFound]; [ErrFenced]
// when another process holds a live lease on the agent; the database's
// error.
func (s *Store) Quarantine(agentID string) (string, error) {
	if err := identity.ValidateID(agentID); err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.opts.ConnectTimeout)
	defer cancel()
	epoch, err := s.fenceOf(agentID)
	if err != nil {
		return "", err
	}
	var n int64
	var fenced bool
	err = s.pool.QueryRow(ctx, `
		WITH fence AS (
			SELECT 1 FROM existence_leases WHERE agent_id = $1 AND CASE WHEN $2::bigint >= 0
				THEN epoch = $2 AND owner IS NOT NULL AND expires_at > now()
				ELSE owner IS NULL OR expires_at <= now() END
			FOR SHARE
		), del AS (
			DELETE FROM existence_states WHERE agent_id = $1 AND (EXISTS (SELECT 1 FROM fence)
				OR NOT EXISTS (SELECT 1 FROM existence_leases WHERE agent_id = $1))
			RETURNING agent_id, doc, doc_version
		), ins AS (
			INSERT INTO existence_quarantine (agent_id, doc, doc_version) SELECT * FROM del RETURNING id
		)
		SELECT coalesce((SELECT id FROM ins), 0), EXISTS (SELECT 1 FROM existence_states WHERE agent_id = $1)`,
		agentID, epoch).Scan(&n, &fenced)
	if err != nil {
		return "", fmt.Errorf("pgstore: quarantine %s: %w", agentID, err)
	}
	if n == 0 && fenced {
		return "", s.fenceError(ctx, agentID, epoch)
	}
	if n == 0 {
		return "", fmt.Errorf("%w: %s", identity.ErrNotFound, agentID)
	}
	return fmt.Sprintf("postgres:existence_quarantine/%d", n), nil
}

func decode(agentID string, version int, doc []byte) (*identity.AgentState, error) {
	path := rowPath(agentID)
	if version > identity.SchemaVersion {
		return nil, fmt.Errorf("%w: %s has schema_version %d, this version reads at most %d; upgrade the SDK to load it",
			identity.ErrFutureVersion, path, version, identity.SchemaVersion)
	}
	st := new(identity.AgentState)
	if err := json.Unmarshal(doc, st); err != nil {
		return nil, &identity.CorruptError{Path: path, Reason: err.Error(), Err: err}
	}
	if st.Identity.AgentID != agentID {
		return nil, &identity.CorruptError{Path: path, Reason: fmt.Sprintf("identity.agent_id is %q, want %q", st.Identity.AgentID, agentID)}
	}
	if err := st.Validate(); err != nil {
		return nil, &identity.CorruptError{Path: path, Reason: "invalid state: " + err.Error(), Err: err}
	}
	return st, nil
}

// Save implements [identity.Store]: it stores s under s.Identity.AgentID,
// replacing the previous version atomically, and adds the agent to the
// population that [Store.Claim] leases. It returns once the transaction
// holding the save has committed.
//
// Fencing: when this Store holds the agent's lease, the write
// happens only if the lease still has the epoch it was claimed with and
// has not expired (UPDATE … WHERE epoch = $n); when it holds none, only if
// no process holds a live lease. Otherwise nothing is written and Save
// returns a [*FencedError] matching [ErrFenced]. The same statement
// acknowledges the messages of [Store.Send] that the saved inbox or host
// list now holds, so a message is delivered exactly once across crashes.
//
// Group commit: saves of many agents that arrive together share one
// statement and one transaction (see "Group commit" in the package
// documentation), each still fenced by its own epoch: one agent's fenced
// or refused save fails alone, and the others are written.
//
// Other errors: [identity.ErrInvalidID] or suffering.ErrInvalid for a
// state that does not validate; [identity.ErrTooLarge]; a
// [*identity.CorruptError] when the stored document fails its checksum
// (quarantine it first); ctx's error when ctx ended before the save was
// sent (nothing is written); [ErrClosed] after [Store.Close]; the
// database's error.
func (s *Store) Save(ctx context.Context, st *identity.AgentState) error {
	return s.save(ctx, st, -1)
}

// save is Save for a writer bound to epoch want (-1: the held lease).
func (s *Store) save(ctx context.Context, st *identity.AgentState, want int64) error {
	if st == nil {
		return errors.New("pgstore: Save of a nil state")
	}
	if err := st.Validate(); err != nil {
		return err
	}
	id := st.Identity.AgentID
	doc, err := json.Marshal(st)
	if err != nil {
		return fmt.Errorf("pgstore: encode %s: %w", id, err)
	}
	if len(doc) > s.opts.MaxBytes {
		return fmt.Errorf("%w: %s is %d bytes, the limit is %d", identity.ErrTooLarge, id, len(doc), s.opts.MaxBytes)
	}
	epoch, err := s.fenceAt(id, want)
	if err != nil {
		return err
	}
	if epoch < 0 {
		if err := s.ensureAgent(ctx, id); err != nil {
			return err
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	updated := st.UpdatedAt
	if updated.IsZero() {
		updated = time.Now()
	}
	sum := sha256.Sum256(doc)
	r := &saveReq{ctx: ctx, id: id, epoch: epoch, doc: doc, sum: sum[:], updated: updated, ack: s.ackable(st), done: make(chan saveRes, 1)}
	if s.saves == nil {
		s.flushSaves([]*saveReq{r})
	} else if !s.saves.add(r) {
		return ErrClosed
	}
	res := <-r.done
	switch {
	case res.err != nil:
		return res.err
	case res.corrupt:
		return &identity.CorruptError{Path: rowPath(id), Reason: "the stored document was changed outside the store (checksum mismatch); Quarantine it before saving a new one"}
	case !res.wrote:
		return s.fenceError(ctx, id, epoch)
	}
	s.acked(id, r.ack)
	return nil
}

// List implements [identity.Store]: the ids of the stored states, in
// lexical (byte) order.
func (s *Store) List(ctx context.Context) ([]string, error) {
	rows, err := s.pool.Query(ctx, `SELECT agent_id FROM existence_states ORDER BY agent_id COLLATE "C"`)
	if err != nil {
		return nil, fmt.Errorf("pgstore: list: %w", err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("pgstore: list: %w", err)
	}
	if ids == nil {
		ids = []string{}
	}
	return ids, nil
}
