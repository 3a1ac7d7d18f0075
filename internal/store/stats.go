package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/genlens/genlens/internal/store/records"
)

// PutStatsPart stores p in one transaction. The first part of a name
// fixes its shard count and input; on Postgres the set's row is locked
// (FOR UPDATE), so parts of one name posted to several replicas at once
// are applied one after another, and none is lost or counted twice. It
// reports duplicate (and changes nothing) when the shard is held with
// the same bytes; a shard held with other bytes is ErrConflict, a part of
// other inputs ErrMismatch.
func (d *DB) PutStatsPart(ctx context.Context, p records.StatsPart) (duplicate bool, err error) {
	tx, err := d.w.BeginTx(ctx, nil)
	if err != nil {
		return false, err
	}
	defer tx.Rollback()
	created := p.Created.UnixNano()
	ins := "INSERT INTO stats_sets (name, shards, input, created) VALUES (?, ?, ?, ?) ON CONFLICT (name) DO NOTHING"
	if _, err := tx.ExecContext(ctx, d.q(ins), p.Name, p.Shards, p.Input, created); err != nil {
		return false, err
	}
	lock := ""
	if d.Postgres() {
		lock = " FOR UPDATE"
	}
	var shards int
	var input string
	if err := tx.QueryRowContext(ctx, d.q("SELECT shards, input FROM stats_sets WHERE name = ?"+lock), p.Name).Scan(&shards, &input); err != nil {
		return false, err
	}
	if shards != p.Shards {
		return false, fmt.Errorf("%w: %q holds parts of %d shards, this part is of %d", records.ErrMismatch, p.Name, shards, p.Shards)
	}
	if input != p.Input {
		return false, fmt.Errorf("%w: %q holds parts of another input (%s), this part is of %s", records.ErrMismatch, p.Name, input, p.Input)
	}
	var sum string
	err = tx.QueryRowContext(ctx, d.q("SELECT sha256 FROM stats_parts WHERE name = ? AND shard = ?"), p.Name, p.Shard).Scan(&sum)
	switch {
	case err == nil && sum == p.SHA256:
		return true, nil
	case err == nil:
		return false, fmt.Errorf("%w: %q holds another part for shard %d (sha256 %.12s, this one %.12s)", records.ErrConflict, p.Name, p.Shard, sum, p.SHA256)
	case !errors.Is(err, sql.ErrNoRows):
		return false, err
	}
	if _, err := tx.ExecContext(ctx, d.q("INSERT INTO stats_parts (name, shard, sha256, n, data, created) VALUES (?, ?, ?, ?, ?, ?)"),
		p.Name, p.Shard, p.SHA256, p.N, blob(p.Data), created); err != nil {
		if isUniqueViolation(err) {
			return false, fmt.Errorf("%w: %q already holds shard %d", records.ErrConflict, p.Name, p.Shard)
		}
		return false, err
	}
	return false, tx.Commit()
}

// GetStatsSet returns what is held under name, or ErrNotFound.
func (d *DB) GetStatsSet(ctx context.Context, name string) (records.StatsSet, error) {
	s := records.StatsSet{Name: name}
	err := d.r.QueryRowContext(ctx, d.q("SELECT shards, input FROM stats_sets WHERE name = ?"), name).Scan(&s.Shards, &s.Input)
	if errors.Is(err, sql.ErrNoRows) {
		return s, fmt.Errorf("%w: no statistics %q", records.ErrNotFound, name)
	}
	if err != nil {
		return s, err
	}
	rows, err := d.r.QueryContext(ctx, d.q("SELECT shard, n FROM stats_parts WHERE name = ? ORDER BY shard"), name)
	if err != nil {
		return s, err
	}
	defer rows.Close()
	for rows.Next() {
		var shard, n int
		if err := rows.Scan(&shard, &n); err != nil {
			return s, err
		}
		s.Have = append(s.Have, shard)
		s.N += n
	}
	return s, rows.Err()
}

// StatsParts calls fn with the parts held under name, one at a time in
// ascending shard order (so that a merge holds one part's bytes at a
// time), stopping at fn's first error.
func (d *DB) StatsParts(ctx context.Context, name string, fn func(records.StatsPart) error) error {
	var shards []int
	rows, err := d.r.QueryContext(ctx, d.q("SELECT shard FROM stats_parts WHERE name = ? ORDER BY shard"), name)
	if err != nil {
		return err
	}
	for rows.Next() {
		var s int
		if err := rows.Scan(&s); err != nil {
			rows.Close()
			return err
		}
		shards = append(shards, s)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, s := range shards {
		p := records.StatsPart{Name: name, Shard: s}
		var created int64
		err := d.r.QueryRowContext(ctx, d.q("SELECT sha256, n, data, created FROM stats_parts WHERE name = ? AND shard = ?"), name, s).
			Scan(&p.SHA256, &p.N, &p.Data, &created)
		if err != nil {
			return err
		}
		p.Created = time.Unix(0, created).UTC()
		if err := fn(p); err != nil {
			return err
		}
	}
	return nil
}

// DeleteStats removes the set and every part held under name in one
// transaction, or returns ErrNotFound. It is the repair of a name whose
// parts cannot be merged.
func (d *DB) DeleteStats(ctx context.Context, name string) error {
	tx, err := d.w.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, d.q("DELETE FROM stats_parts WHERE name = ?"), name); err != nil {
		return err
	}
	res, err := tx.ExecContext(ctx, d.q("DELETE FROM stats_sets WHERE name = ?"), name)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil {
		return err
	} else if n == 0 {
		return fmt.Errorf("%w: no statistics %q", records.ErrNotFound, name)
	}
	return tx.Commit()
}
