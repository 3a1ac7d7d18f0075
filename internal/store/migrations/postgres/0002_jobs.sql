CREATE TABLE jobs (
	id               TEXT    PRIMARY KEY,
	kind             TEXT    NOT NULL,
	request          BYTEA    NOT NULL,
	status           TEXT    NOT NULL,
	done             INTEGER NOT NULL DEFAULT 0,
	total            INTEGER NOT NULL DEFAULT 0,
	result           BYTEA,
	error_kind       TEXT    NOT NULL DEFAULT '',
	error            TEXT    NOT NULL DEFAULT '',
	cancel_requested BOOLEAN NOT NULL DEFAULT FALSE,
	claimed_by       TEXT    NOT NULL DEFAULT '',
	created          BIGINT NOT NULL,
	started          BIGINT,
	heartbeat        BIGINT,
	finished         BIGINT
);
CREATE INDEX jobs_queue ON jobs (status, created, id);

CREATE TABLE artifacts (
	job_id       TEXT NOT NULL,
	name         TEXT NOT NULL,
	content_type TEXT NOT NULL,
	data         BYTEA NOT NULL,
	PRIMARY KEY (job_id, name)
);

CREATE TABLE uploads (
	id      TEXT    PRIMARY KEY,
	name    TEXT    NOT NULL,
	size    BIGINT NOT NULL,
	sha256  TEXT    NOT NULL,
	created BIGINT NOT NULL
);

CREATE TABLE selections (
	id      TEXT    PRIMARY KEY,
	config  BYTEA    NOT NULL,
	seq     BIGINT NOT NULL DEFAULT 0,
	created BIGINT NOT NULL,
	updated BIGINT NOT NULL
);

CREATE TABLE selection_batches (
	selection_id TEXT    NOT NULL REFERENCES selections(id) ON DELETE CASCADE,
	seq          BIGINT NOT NULL,
	generator    INTEGER NOT NULL,
	nrows        INTEGER NOT NULL,
	ncols        INTEGER NOT NULL,
	data         BYTEA    NOT NULL,
	created      BIGINT NOT NULL,
	PRIMARY KEY (selection_id, seq)
);
