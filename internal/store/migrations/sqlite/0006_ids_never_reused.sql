-- Ids are never reused. A plain INTEGER PRIMARY KEY takes the largest id
-- in the table plus one, so deleting the newest monitor handed its id to
-- the next one created, and rows a client still sent for the deleted
-- monitor landed in the new one. AUTOINCREMENT takes one more than the
-- largest id ever used (kept in sqlite_sequence). SQLite cannot add it
-- to a table, so both tables whose ids clients see are rebuilt, their
-- rows kept with their ids; the migration runs with foreign keys off, so
-- that dropping the old monitors table does not cascade into
-- monitor_rows, whose reference then names the new table.
CREATE TABLE monitors_new (
	id         INTEGER PRIMARY KEY AUTOINCREMENT,
	name       TEXT    NOT NULL UNIQUE,
	model      TEXT    NOT NULL,
	chunk_size INTEGER NOT NULL DEFAULT 0,
	period     TEXT    NOT NULL DEFAULT '',
	created_at INTEGER NOT NULL
);
INSERT INTO monitors_new (id, name, model, chunk_size, period, created_at)
	SELECT id, name, model, chunk_size, period, created_at FROM monitors ORDER BY id;
DROP TABLE monitors;
ALTER TABLE monitors_new RENAME TO monitors;

CREATE TABLE llm_requests_new (
	id               INTEGER PRIMARY KEY AUTOINCREMENT,
	created_at       INTEGER NOT NULL,
	model            TEXT    NOT NULL,
	messages_hash    TEXT    NOT NULL,
	answer           TEXT    NOT NULL,
	stream           INTEGER NOT NULL DEFAULT 0,
	status           INTEGER NOT NULL,
	score            TEXT    NOT NULL,
	uncertainty      REAL,
	samples          INTEGER NOT NULL,
	error            TEXT    NOT NULL DEFAULT '',
	upstream_seconds REAL    NOT NULL,
	sample_seconds   REAL    NOT NULL,
	total_seconds    REAL    NOT NULL
);
INSERT INTO llm_requests_new SELECT id, created_at, model, messages_hash, answer, stream, status, score, uncertainty,
	samples, error, upstream_seconds, sample_seconds, total_seconds FROM llm_requests ORDER BY id;
DROP TABLE llm_requests;
ALTER TABLE llm_requests_new RENAME TO llm_requests;
CREATE INDEX llm_requests_time ON llm_requests (created_at);
