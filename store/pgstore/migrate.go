package pgstore

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// SchemaVersion is the database schema version this package migrates to;
// a database at a higher version is refused with [ErrSchemaTooNew].
var SchemaVersion = len(migrations)

// advisoryKey is the pg_advisory_lock key held while migrating ("exist").
const advisoryKey = 0x6578697374

// migrations are applied in order, each in its own transaction; the
// version of a database is the number applied. Never edit one that has
// shipped: append.
var migrations = []string{
	// 1: states, leases, messages, tasks and the leases view.
	`
CREATE TABLE existence_states (
	agent_id    text COLLATE "C" PRIMARY KEY,
	doc         bytea NOT NULL,
	doc_version int NOT NULL,
	doc_sha256  bytea NOT NULL,
	epoch       bigint NOT NULL,
	updated_at  timestamptz NOT NULL
);
CREATE TABLE existence_quarantine (
	id          bigserial PRIMARY KEY,
	agent_id    text COLLATE "C" NOT NULL,
	doc         bytea NOT NULL,
	doc_version int NOT NULL,
	moved_at    timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE existence_leases (
	agent_id    text COLLATE "C" PRIMARY KEY,
	epoch       bigint NOT NULL DEFAULT 0,
	owner       text,
	host        text,
	pid         int,
	acquired_at timestamptz,
	expires_at  timestamptz NOT NULL DEFAULT '-infinity'
);
CREATE TABLE existence_messages (
	id          bigserial PRIMARY KEY,
	agent_id    text COLLATE "C" NOT NULL,
	kind        text NOT NULL CHECK (kind IN ('peer', 'host')),
	sender      text NOT NULL,
	body        text NOT NULL,
	sent_at     timestamptz NOT NULL,
	acked_at    timestamptz,
	acked_epoch bigint
);
CREATE INDEX existence_messages_pending ON existence_messages (agent_id, id) WHERE acked_at IS NULL;
CREATE TABLE existence_tasks (
	seq         bigserial PRIMARY KEY,
	description text NOT NULL,
	agent       text COLLATE "C" NOT NULL DEFAULT '',
	status      text NOT NULL CHECK (status IN ('pending', 'assigned', 'completed', 'failed')),
	assigned_to text COLLATE "C" NOT NULL DEFAULT '',
	epoch       bigint NOT NULL DEFAULT 0,
	submitted   timestamptz NOT NULL,
	assigned    timestamptz,
	ended       timestamptz,
	result      text NOT NULL DEFAULT ''
);
CREATE INDEX existence_tasks_open ON existence_tasks (status, seq) WHERE status IN ('pending', 'assigned');
CREATE VIEW leases AS
SELECT l.agent_id, l.owner, l.host, l.pid, l.epoch, l.acquired_at, l.expires_at,
       (l.owner IS NOT NULL AND l.expires_at > now()) AS live, s.updated_at AS saved_at
FROM existence_leases l LEFT JOIN existence_states s USING (agent_id);
`,
	// 2: small named documents kept whole, such as the requests
	// to the human ([Store.Document]).
	`
CREATE TABLE existence_documents (
	name       text COLLATE "C" PRIMARY KEY,
	data       bytea NOT NULL,
	updated_at timestamptz NOT NULL DEFAULT now()
);
`,
	// 3: the agents' long-term memories (package memory), one row each,
	// one per distinct text of an agent; no pgvector needed.
	`
CREATE TABLE existence_memories (
	agent_id     text COLLATE "C" NOT NULL,
	id           text COLLATE "C" NOT NULL,
	text         text NOT NULL,
	text_sha256  bytea NOT NULL,
	kind         text NOT NULL,
	importance   double precision NOT NULL CHECK (importance BETWEEN 0 AND 1),
	important    boolean NOT NULL,
	created      timestamptz NOT NULL,
	last_access  timestamptz NOT NULL,
	access_count int NOT NULL,
	model        text,
	dimensions   int,
	vector       bytea,
	PRIMARY KEY (agent_id, id)
);
CREATE UNIQUE INDEX existence_memories_text ON existence_memories (agent_id, text_sha256);
CREATE INDEX existence_memories_order ON existence_memories (agent_id, created, id);
`,
	// 4: storage for a row rewritten every few seconds. Every renewal
	// rewrites each lease row, and every cycle its agent's state row:
	// pages kept half (leases) and 70% (states) full leave room for the
	// new version on the same page, so that the update is HOT (no index
	// entry, pruned without a vacuum). States are compressed with lz4,
	// several times cheaper than the default pglz, on a server built with
	// it (PostgreSQL 14 and later); another keeps pglz, and says so in a
	// notice. Existing pages and values change as they are rewritten.
	`
ALTER TABLE existence_leases SET (fillfactor = 50);
ALTER TABLE existence_states SET (fillfactor = 70);
DO $$ BEGIN
	EXECUTE 'ALTER TABLE existence_states ALTER COLUMN doc SET COMPRESSION lz4';
EXCEPTION WHEN feature_not_supported OR syntax_error THEN
	RAISE NOTICE 'existence_states.doc keeps the default compression: %', SQLERRM;
END $$;
`,
	// 5: memories found by their words, and knowledge that changes:
	// text_search, the text's tsvector under the 'english' configuration
	// (Snowball stems, English stop words), generated and stored, with a
	// GIN index; fact names the fact a memory states, superseded_by the
	// newer memory standing for it (NULL while current).
	`
ALTER TABLE existence_memories
	ADD COLUMN fact text,
	ADD COLUMN superseded_by text COLLATE "C",
	ADD COLUMN text_search tsvector GENERATED ALWAYS AS (to_tsvector('english'::regconfig, text)) STORED;
CREATE INDEX existence_memories_text_search ON existence_memories USING gin (text_search);
`,
}

// migrate brings the schema up to date under an advisory lock, so that
// concurrent starts apply each migration once.
func migrate(ctx context.Context, pool *pgxpool.Pool) error {
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("pgstore: migrate: %w", err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1)`, int64(advisoryKey)); err != nil {
		return fmt.Errorf("pgstore: migrate: taking the advisory lock: %w", err)
	}
	defer conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, int64(advisoryKey))
	if _, err := conn.Exec(ctx, `CREATE TABLE IF NOT EXISTS existence_migrations (
		version int PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
		return fmt.Errorf("pgstore: migrate: %w", err)
	}
	var version int
	if err := conn.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM existence_migrations`).Scan(&version); err != nil {
		return fmt.Errorf("pgstore: migrate: %w", err)
	}
	if version > len(migrations) {
		return fmt.Errorf("%w: the database is at schema version %d, this version knows up to %d; upgrade the SDK",
			ErrSchemaTooNew, version, len(migrations))
	}
	for v := version; v < len(migrations); v++ {
		err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, migrations[v]); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, `INSERT INTO existence_migrations (version) VALUES ($1)`, v+1)
			return err
		})
		if err != nil {
			return fmt.Errorf("pgstore: migrate to schema version %d: %w", v+1, err)
		}
	}
	return nil
}
