-- Partial statistics posted to /api/v1/stats/{name}/parts: one set per
-- name (its shard count and input, fixed by the first part) and the part
-- files themselves, merged in shard order when read.
CREATE TABLE stats_sets (
	name    TEXT    PRIMARY KEY,
	shards  INTEGER NOT NULL,
	input   TEXT    NOT NULL,
	created BIGINT  NOT NULL
);

CREATE TABLE stats_parts (
	name    TEXT    NOT NULL REFERENCES stats_sets (name),
	shard   INTEGER NOT NULL,
	sha256  TEXT    NOT NULL,
	n       BIGINT  NOT NULL,
	data    BYTEA   NOT NULL,
	created BIGINT  NOT NULL,
	PRIMARY KEY (name, shard)
);
