-- Requests proxied to an OpenAI-compatible endpoint (genlens serve
-- --llm-upstream) with the uncertainty of their answer; never a key.
CREATE TABLE llm_requests (
	id               INTEGER PRIMARY KEY,
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
CREATE INDEX llm_requests_time ON llm_requests (created_at);
