-- Arrival order per monitor (chunks by size, the last chunk for /metrics)
-- without sorting every row, and the labelled rows counted from an index.
CREATE INDEX monitor_rows_seq ON monitor_rows (monitor_id, seq);
CREATE INDEX monitor_rows_labelled ON monitor_rows (monitor_id) WHERE target IS NOT NULL;
