CREATE TABLE jobs (
	id               TEXT    PRIMARY KEY,
	kind             TEXT    NOT NULL,
	request          BLOB    NOT NULL,
	status           TEXT    NOT NULL,
	done             INTEGER NOT NULL DEFAULT 0,
	total            INTEGER NOT NULL DEFAULT 0,
	result           BLOB,
	error_kind       TEXT    NOT NULL DEFAULT '',
	error            TEXT    NOT NULL DEFAULT '',
	cancel_requested INTEGER NOT NULL DEFAULT 0,
	claimed_by       TEXT    NOT NULL DEFAULT '',
	created          INTEGER NOT NULL,
	started          INTEGER,
	heartbeat        INTEGER,
	finished         INTEGER
);
CREATE INDEX jobs_queue ON jobs (status, created, id);

CREATE TABLE artifacts (
	job_id       TEXT NOT NULL,
	name         TEXT NOT NULL,
	content_type TEXT NOT NULL,
	data         BLOB NOT NULL,
	PRIMARY KEY (job_id, name)
);

CREATE TABLE uploads (
	id      TEXT    PRIMARY KEY,
	name    TEXT    NOT NULL,
	size    INTEGER NOT NULL,
	sha256  TEXT    NOT NULL,
	created INTEGER NOT NULL
);

CREATE TABLE selections (
	id      TEXT    PRIMARY KEY,
	config  BLOB    NOT NULL,
	seq     INTEGER NOT NULL DEFAULT 0,
	created INTEGER NOT NULL,
	updated INTEGER NOT NULL
);

CREATE TABLE selection_batches (
	selection_id TEXT    NOT NULL REFERENCES selections(id) ON DELETE CASCADE,
	seq          INTEGER NOT NULL,
	generator    INTEGER NOT NULL,
	nrows        INTEGER NOT NULL,
	ncols        INTEGER NOT NULL,
	data         BLOB    NOT NULL,
	created      INTEGER NOT NULL,
	PRIMARY KEY (selection_id, seq)
);
