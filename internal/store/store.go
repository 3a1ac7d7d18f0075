package store

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx"
	_ "modernc.org/sqlite"             // database/sql driver "sqlite"
)

// DB is an open store. It is safe for concurrent use.
type DB struct {
	// w takes writes; on SQLite it is one connection, so that writers
	// queue in Go instead of failing with SQLITE_BUSY. r serves reads,
	// which WAL lets run beside the writer. On Postgres both are the
	// same pool.
	w, r    *sql.DB
	backend string

	insertStmt *sql.Stmt // see prepareInsert

	// gate queues SQLite's row and label writers first come, first
	// served (blocked channel senders wake in order); database/sql hands
	// a freed connection to a random waiter, which under 50 concurrent
	// clients made the slowest request wait five times the median. nil
	// on Postgres, which has many connections.
	gate chan struct{}
}

// enter waits for the write gate (see DB.gate); the returned func leaves it.
func (d *DB) enter(ctx context.Context) (func(), error) {
	if d.gate == nil {
		return func() {}, nil
	}
	select {
	case d.gate <- struct{}{}:
		return func() { <-d.gate }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Backend names the database: "sqlite" or "postgres".
func (d *DB) Backend() string { return d.backend }

// Postgres reports whether the store is on Postgres.
func (d *DB) Postgres() bool { return d.backend == "postgres" }

// IsPostgresDSN reports whether dsn names a Postgres database
// (postgres:// or postgresql:// URL) rather than a SQLite file.
func IsPostgresDSN(dsn string) bool {
	return strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://")
}

// Open opens the store named by dsn: a postgres:// or postgresql:// URL,
// or else the path of a SQLite file, created when missing. It applies the
// pending migrations before returning.
func Open(ctx context.Context, dsn string) (*DB, error) {
	var d *DB
	var err error
	if IsPostgresDSN(dsn) {
		d, err = openPostgres(ctx, dsn)
	} else {
		d, err = openSQLite(dsn)
	}
	if err != nil {
		return nil, err
	}
	if err := d.migrate(ctx); err != nil {
		d.Close()
		return nil, err
	}
	if err := d.prepareInsert(ctx); err != nil {
		d.Close()
		return nil, err
	}
	return d, nil
}

func openPostgres(ctx context.Context, dsn string) (*DB, error) {
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		return nil, fmt.Errorf("store: %s: %w", redact(dsn), err)
	}
	db.SetMaxOpenConns(4 * runtime.GOMAXPROCS(0))
	db.SetMaxIdleConns(4 * runtime.GOMAXPROCS(0))
	db.SetConnMaxIdleTime(5 * time.Minute)
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := db.PingContext(pctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("store: cannot reach Postgres at %s: %w", redact(dsn), err)
	}
	return &DB{w: db, r: db, backend: "postgres"}, nil
}

// redact drops the password from a URL for messages.
func redact(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		return "postgres://…"
	}
	return u.Redacted()
}

func openSQLite(path string) (*DB, error) {
	if path == "" {
		return nil, errors.New("store: empty SQLite path")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("store: %s: %w", path, err)
	}
	u := url.URL{Scheme: "file", Path: abs}
	q := url.Values{}
	for _, p := range []string{"journal_mode(WAL)", "synchronous(FULL)", "busy_timeout(10000)", "foreign_keys(1)"} {
		q.Add("_pragma", p)
	}
	// Write transactions take the write lock at BEGIN, so that a read
	// never has to be upgraded into a write halfway (SQLITE_BUSY).
	wq := url.Values{"_txlock": {"immediate"}}
	for k, v := range q {
		wq[k] = v
	}
	u.RawQuery = wq.Encode()
	w, err := sql.Open("sqlite", u.String())
	if err != nil {
		return nil, fmt.Errorf("store: %s: %w", path, err)
	}
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	w.SetConnMaxLifetime(0)
	if err := w.Ping(); err != nil {
		w.Close()
		return nil, fmt.Errorf("store: cannot open SQLite database %s: %w", path, err)
	}
	rq := url.Values{}
	for k, v := range q {
		rq[k] = v
	}
	rq.Add("_pragma", "query_only(1)")
	u.RawQuery = rq.Encode()
	r, err := sql.Open("sqlite", u.String())
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("store: %s: %w", path, err)
	}
	n := max(2, runtime.GOMAXPROCS(0))
	r.SetMaxOpenConns(n)
	r.SetMaxIdleConns(n)
	return &DB{w: w, r: r, backend: "sqlite", gate: make(chan struct{}, 1)}, nil
}

// Close closes the database.
func (d *DB) Close() error {
	var err error
	if d.insertStmt != nil {
		err = d.insertStmt.Close()
	}
	err = errors.Join(err, d.w.Close())
	if d.r != d.w {
		err = errors.Join(err, d.r.Close())
	}
	return err
}

// Ping checks that the database answers.
func (d *DB) Ping(ctx context.Context) error { return d.r.PingContext(ctx) }

// q rewrites a query written with ? placeholders for the backend:
// Postgres numbers them $1, $2, ...
func (d *DB) q(query string) string {
	if d.backend != "postgres" {
		return query
	}
	var b strings.Builder
	n := 0
	for _, c := range query {
		if c == '?' {
			n++
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(n))
			continue
		}
		b.WriteRune(c)
	}
	return b.String()
}

//go:embed migrations
var migrations embed.FS

// migrate applies the migrations newer than the database's version, each
// in its own transaction with its version row.
func (d *DB) migrate(ctx context.Context) error {
	dir := "migrations/" + d.backend
	ents, err := fs.ReadDir(migrations, dir)
	if err != nil {
		return err
	}
	names := make([]string, 0, len(ents))
	for _, e := range ents {
		names = append(names, e.Name())
	}
	slices.Sort(names)
	// One connection for the whole run: on SQLite, foreign keys are off
	// while migrations run (the pragma is a no-op inside a transaction),
	// so that rebuilding a table (create the new one, copy, drop the old,
	// rename) does not cascade the drop into the tables referencing it;
	// foreign_key_check proves the references whole before the commit.
	conn, err := d.w.Conn(ctx)
	if err != nil {
		return fmt.Errorf("store: migrations: %w", err)
	}
	defer conn.Close()
	if d.backend == "sqlite" {
		if _, err := conn.ExecContext(ctx, "PRAGMA foreign_keys = OFF"); err != nil {
			return fmt.Errorf("store: migrations: %w", err)
		}
		defer conn.ExecContext(context.WithoutCancel(ctx), "PRAGMA foreign_keys = ON")
	}
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store: migrations: %w", err)
	}
	defer tx.Rollback()
	if d.backend == "postgres" {
		// Replicas starting together migrate one after the other.
		if _, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock(7234019)"); err != nil {
			return fmt.Errorf("store: migrations lock: %w", err)
		}
	}
	if _, err := tx.ExecContext(ctx, "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)"); err != nil {
		return fmt.Errorf("store: migrations: %w", err)
	}
	var cur sql.NullInt64
	if err := tx.QueryRowContext(ctx, "SELECT MAX(version) FROM schema_migrations").Scan(&cur); err != nil {
		return fmt.Errorf("store: migrations: %w", err)
	}
	for _, name := range names {
		v, err := strconv.Atoi(strings.SplitN(name, "_", 2)[0])
		if err != nil {
			return fmt.Errorf("store: migration %s: no version number", name)
		}
		if int64(v) <= cur.Int64 {
			continue
		}
		b, err := migrations.ReadFile(dir + "/" + name)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, string(b)); err != nil {
			return fmt.Errorf("store: migration %s: %w", name, err)
		}
		if _, err := tx.ExecContext(ctx, d.q("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)"), v, name, time.Now().Unix()); err != nil {
			return fmt.Errorf("store: migration %s: %w", name, err)
		}
	}
	if d.backend == "sqlite" {
		if err := foreignKeyCheck(ctx, tx); err != nil {
			return err
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("store: migrations: %w", err)
	}
	return nil
}

// foreignKeyCheck fails when a SQLite row references a missing one.
func foreignKeyCheck(ctx context.Context, tx *sql.Tx) error {
	rows, err := tx.QueryContext(ctx, "PRAGMA foreign_key_check")
	if err != nil {
		return fmt.Errorf("store: migrations: %w", err)
	}
	defer rows.Close()
	if rows.Next() {
		var table, parent string
		var rowid sql.NullInt64
		var fk int
		if err := rows.Scan(&table, &rowid, &parent, &fk); err != nil {
			return fmt.Errorf("store: migrations: foreign key check: %w", err)
		}
		return fmt.Errorf("store: migrations: row %d of %s references a missing row of %s", rowid.Int64, table, parent)
	}
	return rows.Err()
}

// Version returns the schema version: the number of the last migration
// applied.
func (d *DB) Version(ctx context.Context) (int, error) {
	var v sql.NullInt64
	err := d.r.QueryRowContext(ctx, "SELECT MAX(version) FROM schema_migrations").Scan(&v)
	return int(v.Int64), err
}
