CREATE TABLE monitors (
	id         INTEGER PRIMARY KEY,
	name       TEXT    NOT NULL UNIQUE,
	model      TEXT    NOT NULL,
	chunk_size INTEGER NOT NULL DEFAULT 0,
	period     TEXT    NOT NULL DEFAULT '',
	created_at INTEGER NOT NULL
);

CREATE TABLE monitor_rows (
	seq        INTEGER PRIMARY KEY,
	monitor_id INTEGER NOT NULL REFERENCES monitors(id) ON DELETE CASCADE,
	row_id     TEXT    NOT NULL,
	ts         INTEGER,
	features   BLOB    NOT NULL,
	prediction REAL    NOT NULL,
	estimate   REAL    NOT NULL,
	target     REAL,
	realized   REAL,
	UNIQUE (monitor_id, row_id)
);

CREATE INDEX monitor_rows_time ON monitor_rows (monitor_id, ts, seq);
