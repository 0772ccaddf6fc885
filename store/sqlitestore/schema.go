package sqlitestore

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/existence-loop/sdk/identity"
)

// SchemaVersion is the version of the database schema this package writes
// and reads, kept in SQLite's PRAGMA user_version. [Open] migrates an older
// database to it, in one transaction, and refuses a newer one with an
// error wrapping [identity.ErrFutureVersion].
const SchemaVersion = 7

// migrations[v] takes a database from schema version v to v+1. Adding a
// version means appending one script and raising [SchemaVersion]; a
// script never changes once released.
var migrations = [SchemaVersion]string{
	0: `
CREATE TABLE agents (
	id            TEXT PRIMARY KEY,
	name          TEXT NOT NULL,
	load          REAL NOT NULL,    -- cumulative suffering load, 0–1 (spec §4)
	crisis_cycles INTEGER NOT NULL,
	active_goal   TEXT,             -- objective of the active goal, NULL when none
	worldview     TEXT NOT NULL,
	narrative     TEXT NOT NULL,
	identity      TEXT NOT NULL,    -- JSON: traits, domains, opinions, open_questions
	suffering     TEXT NOT NULL,    -- JSON: suffering.State
	created_at    TEXT,             -- RFC 3339, NULL when unknown
	updated_at    TEXT NOT NULL,
	version       INTEGER NOT NULL  -- bumped by every save
);
CREATE TABLE goals (
	agent_id     TEXT NOT NULL,
	seq          INTEGER NOT NULL,  -- order within the agent's history
	goal_id      TEXT NOT NULL,
	objective    TEXT NOT NULL,
	status       TEXT NOT NULL,
	started      TEXT,
	ended        TEXT,
	outcome      TEXT NOT NULL,
	task_id      TEXT NOT NULL,
	fallback     INTEGER NOT NULL,
	cause        TEXT NOT NULL,
	broken_tools TEXT,              -- JSON array, NULL when empty
	artifacts    TEXT,              -- JSON array, NULL when empty
	PRIMARY KEY (agent_id, seq)
) WITHOUT ROWID;
CREATE TABLE discoveries (
	agent_id TEXT NOT NULL,
	seq      INTEGER NOT NULL,
	text     TEXT NOT NULL,
	source   TEXT NOT NULL,
	at       TEXT,
	PRIMARY KEY (agent_id, seq)
) WITHOUT ROWID;
CREATE TABLE messages (
	agent_id TEXT NOT NULL,
	box      TEXT NOT NULL CHECK (box IN ('inbox', 'host')),
	seq      INTEGER NOT NULL,
	sender   TEXT NOT NULL,
	text     TEXT NOT NULL,
	at       TEXT,
	PRIMARY KEY (agent_id, box, seq)
) WITHOUT ROWID;
CREATE TABLE locks (
	agent_id TEXT PRIMARY KEY,
	holder   TEXT NOT NULL,         -- "host:pid:token"
	host     TEXT NOT NULL,
	pid      INTEGER NOT NULL,
	acquired TEXT NOT NULL,
	expires  TEXT NOT NULL          -- the lease lapses then unless renewed
);
CREATE TABLE quarantine (
	qid         INTEGER PRIMARY KEY,
	agent_id    TEXT NOT NULL,
	at          TEXT NOT NULL,
	agent       TEXT,               -- JSON object of the agents row, raw
	goals       TEXT,               -- JSON array of the goals rows, raw
	discoveries TEXT,
	messages    TEXT
);
CREATE TABLE tasks (
	seq         INTEGER PRIMARY KEY AUTOINCREMENT,
	id          TEXT NOT NULL UNIQUE,
	description TEXT NOT NULL,
	agent       TEXT NOT NULL,
	status      TEXT NOT NULL,
	assigned_to TEXT NOT NULL,
	submitted   TEXT NOT NULL,
	assigned    TEXT,
	ended       TEXT,
	result      TEXT NOT NULL
);
CREATE INDEX tasks_live ON tasks (status, seq);
`,
	// 1 → 2: AgentState.LastPresence, RFC 3339, NULL when never. A
	// row written by version 1 reads as never present.
	1: `ALTER TABLE agents ADD COLUMN last_presence TEXT;`,
	// 2 → 3: small named documents kept whole, such as the
	// requests to the human ([Store.Document]).
	2: `
CREATE TABLE documents (
	name       TEXT PRIMARY KEY,
	data       BLOB NOT NULL,       -- the document's bytes, e.g. requests.json's JSON
	updated_at TEXT NOT NULL        -- RFC 3339
) WITHOUT ROWID;
`,
	// 3 → 4: the agents' long-term memories (package memory), one row
	// each, one per distinct text of an agent.
	3: `
CREATE TABLE memories (
	agent_id     TEXT NOT NULL,
	id           TEXT NOT NULL,
	text         TEXT NOT NULL,
	kind         TEXT NOT NULL,
	importance   REAL NOT NULL,     -- 0–1
	important    INTEGER NOT NULL,  -- never evicted
	created      INTEGER NOT NULL,  -- microseconds since the Unix epoch, UTC
	last_access  INTEGER NOT NULL,
	access_count INTEGER NOT NULL,
	model        TEXT,              -- embedding model; NULL while pending
	dimensions   INTEGER,
	vector       BLOB,              -- little-endian float32, unit length
	PRIMARY KEY (agent_id, id)
);
CREATE UNIQUE INDEX memories_text ON memories (agent_id, text);
CREATE INDEX memories_order ON memories (agent_id, created, id);
`,
	// 4 → 5: AgentState.Slots, the agent's own board of slots, as a
	// JSON array of slot.Slot; NULL when empty. A row written by an
	// earlier version reads as an empty board.
	4: `ALTER TABLE agents ADD COLUMN slots TEXT;`,
	// 5 → 6: memories found by their words and knowledge that changes.
	// The memories table is rebuilt with an INTEGER PRIMARY KEY (rid),
	// the stable key of memories_fts, an FTS5 index of the texts
	// (external content, Porter stemmer over unicode61 tokens) kept by
	// triggers; fact names the fact a memory states, superseded_by the
	// newer memory that stands for it (NULL while current).
	5: `
CREATE TABLE memories_v6 (
	rid           INTEGER PRIMARY KEY, -- the key of memories_fts; an alias of the rowid, which VACUUM keeps
	agent_id      TEXT NOT NULL,
	id            TEXT NOT NULL,
	text          TEXT NOT NULL,
	kind          TEXT NOT NULL,
	importance    REAL NOT NULL,     -- 0–1
	important     INTEGER NOT NULL,  -- never evicted
	created       INTEGER NOT NULL,  -- microseconds since the Unix epoch, UTC
	last_access   INTEGER NOT NULL,
	access_count  INTEGER NOT NULL,
	model         TEXT,              -- embedding model; NULL while pending
	dimensions    INTEGER,
	vector        BLOB,              -- little-endian float32, unit length
	fact          TEXT,              -- the fact the memory states; NULL when none
	superseded_by TEXT,              -- the id of the newer memory standing for it; NULL while current
	UNIQUE (agent_id, id)
);
INSERT INTO memories_v6 (agent_id, id, text, kind, importance, important, created, last_access, access_count, model, dimensions, vector)
	SELECT agent_id, id, text, kind, importance, important, created, last_access, access_count, model, dimensions, vector
	FROM memories ORDER BY agent_id, created, id;
DROP TABLE memories;
ALTER TABLE memories_v6 RENAME TO memories;
CREATE UNIQUE INDEX memories_text ON memories (agent_id, text);
CREATE INDEX memories_order ON memories (agent_id, created, id);
CREATE VIRTUAL TABLE memories_fts USING fts5(text, content='memories', content_rowid='rid', tokenize='porter unicode61');
INSERT INTO memories_fts (memories_fts) VALUES ('rebuild');
CREATE TRIGGER memories_fts_add AFTER INSERT ON memories BEGIN
	INSERT INTO memories_fts (rowid, text) VALUES (new.rid, new.text);
END;
CREATE TRIGGER memories_fts_delete AFTER DELETE ON memories BEGIN
	INSERT INTO memories_fts (memories_fts, rowid, text) VALUES ('delete', old.rid, old.text);
END;
CREATE TRIGGER memories_fts_text AFTER UPDATE OF text ON memories BEGIN
	INSERT INTO memories_fts (memories_fts, rowid, text) VALUES ('delete', old.rid, old.text);
	INSERT INTO memories_fts (rowid, text) VALUES (new.rid, new.text);
END;
`,
	// 6 → 7: what an agent keeps beside its identity, as one JSON
	// object (stateExtra): its working memory, the note on a refused
	// one, and when it was commissioned; NULL when it has none of them.
	// A row written by an earlier version reads as none.
	6: `ALTER TABLE agents ADD COLUMN extra TEXT;`,
}

// migrate brings db to [SchemaVersion] in one immediate transaction, so
// that two processes opening a new file do not both create it. It returns
// an error wrapping [identity.ErrFutureVersion] for a newer database.
func migrate(ctx context.Context, db *sql.DB, path string) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("sqlitestore: %s: %w", path, err)
	}
	defer tx.Rollback()
	var v int
	if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
		return fmt.Errorf("sqlitestore: %s: reading the schema version: %w", path, err)
	}
	if v > SchemaVersion {
		return fmt.Errorf("%w: %s has schema version %d, this version reads at most %d; upgrade the SDK to open it",
			identity.ErrFutureVersion, path, v, SchemaVersion)
	}
	if v < 0 {
		return fmt.Errorf("%w: %s has schema version %d", identity.ErrCorrupt, path, v)
	}
	if v == SchemaVersion {
		return nil
	}
	for ; v < SchemaVersion; v++ {
		if _, err := tx.ExecContext(ctx, migrations[v]); err != nil {
			return fmt.Errorf("sqlitestore: %s: migrating schema version %d to %d: %w", path, v, v+1, err)
		}
	}
	if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", SchemaVersion)); err != nil {
		return fmt.Errorf("sqlitestore: %s: %w", path, err)
	}
	return tx.Commit()
}
