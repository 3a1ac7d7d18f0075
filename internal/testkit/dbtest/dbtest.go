// Package dbtest gives tests fresh databases of every store backend: a
// SQLite file in a temporary directory always, and a Postgres database
// when the environment variable GENLENS_TEST_POSTGRES holds the URL of a
// server the tests may create databases on (.ci/run starts one).
package dbtest

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"
)

// EnvPostgres names the environment variable with the Postgres URL.
const EnvPostgres = "GENLENS_TEST_POSTGRES"

// Backend is a store backend a test runs against.
type Backend struct {
	Name string
	// DSN returns the data source name of a fresh, empty database,
	// dropped when the test ends.
	DSN func(t testing.TB) string
}

// Backends returns SQLite and, when reachable, Postgres. When Postgres
// is not, the first call logs why it is skipped.
func Backends(t testing.TB) []Backend {
	bs := []Backend{{Name: "sqlite", DSN: SQLite}}
	if reason := postgresProblem(); reason != "" {
		t.Logf("Postgres backend skipped: %s", reason)
		return bs
	}
	return append(bs, Backend{Name: "postgres", DSN: Postgres})
}

// SQLite returns the path of a SQLite file in the test's temporary
// directory.
func SQLite(t testing.TB) string { return filepath.Join(t.TempDir(), "genlens.db") }

var (
	pgOnce   sync.Once
	pgReason string
)

func postgresProblem() string {
	pgOnce.Do(func() {
		dsn := os.Getenv(EnvPostgres)
		if dsn == "" {
			pgReason = EnvPostgres + " is not set (a postgres:// URL of a server the tests may create databases on)"
			return
		}
		db, err := sql.Open("pgx", dsn)
		if err != nil {
			pgReason = err.Error()
			return
		}
		defer db.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := db.PingContext(ctx); err != nil {
			pgReason = fmt.Sprintf("%s unreachable: %v", EnvPostgres, err)
		}
	})
	return pgReason
}

// Postgres returns the URL of a fresh database on the server of
// GENLENS_TEST_POSTGRES, or skips the test when there is none.
func Postgres(t testing.TB) string {
	t.Helper()
	if reason := postgresProblem(); reason != "" {
		t.Skipf("Postgres: %s", reason)
	}
	admin := os.Getenv(EnvPostgres)
	db, err := sql.Open("pgx", admin)
	if err != nil {
		t.Fatal(err)
	}
	name := fmt.Sprintf("genlens_test_%d_%08x", time.Now().Unix(), rand.Uint32())
	ctx := context.Background()
	if _, err := db.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
		db.Close()
		t.Fatalf("creating test database: %v", err)
	}
	t.Cleanup(func() {
		defer db.Close()
		if _, err := db.ExecContext(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			t.Logf("dropping test database %s: %v", name, err)
		}
	})
	u, err := url.Parse(admin)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + name
	return u.String()
}
