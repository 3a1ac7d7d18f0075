// Package store keeps the state of `genlens serve`: monitors with their
// check models, the rows and labels ingested for them, and the per-row
// inputs of chunk computation; jobs, artifacts, uploads and online
// selections for the job runner (package jobrun); the chat completions
// passed through the LLM proxy with their uncertainty; and the part files
// of sharded statistics posted to the service (PutStatsPart: one
// transaction per part).
//
// One Go API runs on two backends: an embedded SQLite file (the pure-Go
// modernc.org/sqlite, the default) and Postgres (github.com/jackc/pgx/v5),
// which several service replicas can share. Open chooses by the data
// source name. The schema is a list of numbered SQL migrations embedded
// in the binary, one set per backend, applied at Open inside a
// transaction; on Postgres an advisory lock serialises replicas that
// start together.
//
// # Durability
//
// A write method returns only after its transaction committed. SQLite
// runs in WAL mode with synchronous=FULL: the WAL is synced at every
// commit, so an acknowledged write survives a killed process and a power
// cut alike (NORMAL would survive SIGKILL but could lose the last
// commits on power loss, which "durably stored" rules out); one fsync per
// batch of rows costs little. Postgres commits with its own WAL and
// fsync settings.
//
// A batch of rows is stored whole or not at all: one transaction, and a
// row id that exists already fails the batch with a *DuplicateError
// naming it.
//
// # Ids and values
//
// Monitor and LLM request ids are never reused (SQLite AUTOINCREMENT,
// Postgres identity columns GENERATED ALWAYS): rows still sent for a
// deleted monitor find it gone (ErrNotFound) rather than a newer monitor
// under its id. Timestamps are int64 Unix nanoseconds, so only times
// from MinTime to MaxTime are stored (TimeStorable); text is stored alike
// on both backends, which means without NUL characters (Postgres text
// cannot hold them).
package store
