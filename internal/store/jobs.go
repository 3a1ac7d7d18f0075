package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/genlens/genlens/internal/store/records"
)

// DB implements the job runner's persistence.
var _ records.Store = (*DB)(nil)

// Times are stored as Unix nanoseconds (BIGINT), NULL for the zero time:
// one representation on both backends, exact to the nanosecond.

func nanos(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UnixNano()
}

func fromNanos(n sql.NullInt64) time.Time {
	if !n.Valid {
		return time.Time{}
	}
	return time.Unix(0, n.Int64).UTC()
}

// blob stores nil or empty bytes as NULL.
func blob(b []byte) any {
	if len(b) == 0 {
		return nil
	}
	return b
}

const jobCols = "id, kind, request, status, done, total, result, error_kind, error, cancel_requested, claimed_by, created, started, heartbeat, finished"

func scanJob(sc interface{ Scan(...any) error }) (records.Job, error) {
	var j records.Job
	var status string
	var req, res []byte
	var created, started, heartbeat, finished sql.NullInt64
	err := sc.Scan(&j.ID, &j.Kind, &req, &status, &j.Done, &j.Total, &res, &j.ErrorKind, &j.Error, &j.CancelRequested, &j.ClaimedBy,
		&created, &started, &heartbeat, &finished)
	j.Status = records.Status(status)
	j.Request = req
	if res != nil {
		j.Result = res
	}
	j.Created, j.Started, j.Heartbeat, j.Finished = fromNanos(created), fromNanos(started), fromNanos(heartbeat), fromNanos(finished)
	return j, err
}

// CreateJob stores a queued job; an existing id is ErrConflict.
func (d *DB) CreateJob(ctx context.Context, j records.Job) error {
	_, err := d.w.ExecContext(ctx, d.q("INSERT INTO jobs (id, kind, request, status, done, total, result, error_kind, error, cancel_requested, claimed_by, created, started, heartbeat, finished) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"),
		j.ID, j.Kind, []byte(j.Request), string(j.Status), j.Done, j.Total, blob(j.Result), j.ErrorKind, j.Error, j.CancelRequested, j.ClaimedBy,
		j.Created.UnixNano(), nanos(j.Started), nanos(j.Heartbeat), nanos(j.Finished))
	if err != nil && isUniqueViolation(err) {
		return fmt.Errorf("%w: job %q exists", records.ErrConflict, j.ID)
	}
	return err
}

// GetJob returns a job or ErrNotFound.
func (d *DB) GetJob(ctx context.Context, id string) (records.Job, error) {
	return d.getJob(ctx, d.r, id)
}

type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func (d *DB) getJob(ctx context.Context, q querier, id string) (records.Job, error) {
	j, err := scanJob(q.QueryRowContext(ctx, d.q("SELECT "+jobCols+" FROM jobs WHERE id = ?"), id))
	if errors.Is(err, sql.ErrNoRows) {
		return j, fmt.Errorf("%w: no job %q", records.ErrNotFound, id)
	}
	return j, err
}

// ListJobs returns up to limit jobs (all for limit ≤ 0), newest first.
func (d *DB) ListJobs(ctx context.Context, limit int) ([]records.Job, error) {
	q := "SELECT " + jobCols + " FROM jobs ORDER BY created DESC, id"
	var args []any
	if limit > 0 {
		q += " LIMIT ?"
		args = append(args, limit)
	}
	rows, err := d.r.QueryContext(ctx, d.q(q), args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []records.Job
	for rows.Next() {
		j, err := scanJob(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, j)
	}
	return out, rows.Err()
}

// CountJobs counts the jobs in state s.
func (d *DB) CountJobs(ctx context.Context, s records.Status) (int, error) {
	var n int
	err := d.r.QueryRowContext(ctx, d.q("SELECT COUNT(*) FROM jobs WHERE status = ?"), string(s)).Scan(&n)
	return n, err
}

// ClaimJob takes the oldest queued job for worker. On Postgres the row is
// locked with FOR UPDATE SKIP LOCKED, so that replicas claiming at once
// take different jobs without waiting on each other; on SQLite the write
// transaction is exclusive (BEGIN IMMEDIATE on one connection).
func (d *DB) ClaimJob(ctx context.Context, worker string, now time.Time) (records.Job, bool, error) {
	lock := ""
	if d.Postgres() {
		lock = " FOR UPDATE SKIP LOCKED"
	}
	q := d.q(`UPDATE jobs SET status = 'running', claimed_by = ?, started = ?, heartbeat = ?
		WHERE id = (SELECT id FROM jobs WHERE status = 'queued' ORDER BY created, id LIMIT 1` + lock + `)
		RETURNING ` + jobCols)
	j, err := scanJob(d.w.QueryRowContext(ctx, q, worker, now.UnixNano(), now.UnixNano()))
	if errors.Is(err, sql.ErrNoRows) {
		return records.Job{}, false, nil
	}
	if err != nil {
		return records.Job{}, false, err
	}
	return j, true, nil
}

// notClaimed tells ErrNotFound from ErrNotClaimed after an update of a
// job by its worker matched no row.
func (d *DB) notClaimed(ctx context.Context, id string) error {
	var n int
	if err := d.w.QueryRowContext(ctx, d.q("SELECT COUNT(*) FROM jobs WHERE id = ?"), id).Scan(&n); err != nil {
		return err
	}
	if n == 0 {
		return fmt.Errorf("%w: no job %q", records.ErrNotFound, id)
	}
	return fmt.Errorf("%w: job %q", records.ErrNotClaimed, id)
}

// Touch records progress and a heartbeat and reports a cancel request.
func (d *DB) Touch(ctx context.Context, id, worker string, done, total int, now time.Time) (bool, error) {
	var cancel bool
	err := d.w.QueryRowContext(ctx, d.q("UPDATE jobs SET done = ?, total = ?, heartbeat = ? WHERE id = ? AND status = 'running' AND claimed_by = ? RETURNING cancel_requested"),
		done, total, now.UnixNano(), id, worker).Scan(&cancel)
	if errors.Is(err, sql.ErrNoRows) {
		return false, d.notClaimed(ctx, id)
	}
	return cancel, err
}

// FinishJob moves a job running under worker to its outcome.
func (d *DB) FinishJob(ctx context.Context, id, worker string, o records.Outcome, now time.Time) error {
	res, err := d.w.ExecContext(ctx, d.q("UPDATE jobs SET status = ?, result = ?, error_kind = ?, error = ?, finished = ? WHERE id = ? AND status = 'running' AND claimed_by = ?"),
		string(o.Status), blob(o.Result), o.ErrorKind, o.Error, now.UnixNano(), id, worker)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil {
		return err
	} else if n == 0 {
		return d.notClaimed(ctx, id)
	}
	return nil
}

// CancelJob cancels a queued job at once and flags a running one.
func (d *DB) CancelJob(ctx context.Context, id, msg string, now time.Time) (records.Job, error) {
	tx, err := d.w.BeginTx(ctx, nil)
	if err != nil {
		return records.Job{}, err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, d.q("UPDATE jobs SET status = 'canceled', error_kind = 'canceled', error = ?, finished = ? WHERE id = ? AND status = 'queued'"), msg, now.UnixNano(), id); err != nil {
		return records.Job{}, err
	}
	if _, err := tx.ExecContext(ctx, d.q("UPDATE jobs SET cancel_requested = ? WHERE id = ? AND status = 'running'"), true, id); err != nil {
		return records.Job{}, err
	}
	j, err := d.getJob(ctx, tx, id)
	if err != nil {
		return j, err
	}
	return j, tx.Commit()
}

// FailStale fails the running jobs whose heartbeat is older than before.
func (d *DB) FailStale(ctx context.Context, before time.Time, msg string, now time.Time) ([]string, error) {
	rows, err := d.w.QueryContext(ctx, d.q("UPDATE jobs SET status = 'failed', error_kind = 'internal', error = ?, finished = ? WHERE status = 'running' AND heartbeat < ? RETURNING id"),
		msg, now.UnixNano(), before.UnixNano())
	if err != nil {
		return nil, err
	}
	return sortedIDs(rows)
}

// PutArtifact stores or replaces an artifact.
func (d *DB) PutArtifact(ctx context.Context, a records.Artifact) error {
	data := a.Data
	if data == nil {
		data = []byte{}
	}
	_, err := d.w.ExecContext(ctx, d.q(`INSERT INTO artifacts (job_id, name, content_type, data) VALUES (?, ?, ?, ?)
		ON CONFLICT (job_id, name) DO UPDATE SET content_type = excluded.content_type, data = excluded.data`),
		a.JobID, a.Name, a.ContentType, data)
	return err
}

// GetArtifact returns an artifact or ErrNotFound.
func (d *DB) GetArtifact(ctx context.Context, jobID, name string) (records.Artifact, error) {
	a := records.Artifact{JobID: jobID, Name: name}
	err := d.r.QueryRowContext(ctx, d.q("SELECT content_type, data FROM artifacts WHERE job_id = ? AND name = ?"), jobID, name).Scan(&a.ContentType, &a.Data)
	if errors.Is(err, sql.ErrNoRows) {
		return a, fmt.Errorf("%w: job %q has no artifact %q", records.ErrNotFound, jobID, name)
	}
	return a, err
}

// ListArtifacts describes a job's artifacts, by name.
func (d *DB) ListArtifacts(ctx context.Context, jobID string) ([]records.ArtifactInfo, error) {
	size := "length(data)" // bytes, for a BLOB
	if d.Postgres() {
		size = "octet_length(data)"
	}
	rows, err := d.r.QueryContext(ctx, d.q("SELECT name, content_type, "+size+" FROM artifacts WHERE job_id = ? ORDER BY name"), jobID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []records.ArtifactInfo{}
	for rows.Next() {
		var a records.ArtifactInfo
		if err := rows.Scan(&a.Name, &a.ContentType, &a.Size); err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, rows.Err()
}

// PutUpload records an upload; the first record of a content id stays,
// its created moved to the later upload.
func (d *DB) PutUpload(ctx context.Context, u records.Upload) error {
	later := "max(uploads.created, excluded.created)" // SQLite's scalar max
	if d.Postgres() {
		later = "GREATEST(uploads.created, excluded.created)"
	}
	_, err := d.w.ExecContext(ctx, d.q("INSERT INTO uploads (id, name, size, sha256, created) VALUES (?, ?, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET created = "+later),
		u.ID, u.Name, u.Size, u.SHA256, u.Created.UnixNano())
	return err
}

// GetUpload returns an upload's metadata or ErrNotFound.
func (d *DB) GetUpload(ctx context.Context, id string) (records.Upload, error) {
	u := records.Upload{ID: id}
	var created int64
	err := d.r.QueryRowContext(ctx, d.q("SELECT name, size, sha256, created FROM uploads WHERE id = ?"), id).Scan(&u.Name, &u.Size, &u.SHA256, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return u, fmt.Errorf("%w: no upload %q", records.ErrNotFound, id)
	}
	u.Created = time.Unix(0, created).UTC()
	return u, err
}

// DeleteJobs deletes the terminal jobs finished before `before` and
// their artifacts, in one transaction.
func (d *DB) DeleteJobs(ctx context.Context, before time.Time) ([]string, error) {
	tx, err := d.w.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	// A job's finished is set once, with its terminal status, so the
	// rows this DELETE sees are final; a concurrent sweep of another
	// replica waits for the row lock and then finds them gone.
	rows, err := tx.QueryContext(ctx, d.q("DELETE FROM jobs WHERE status IN ('succeeded', 'failed', 'canceled') AND finished < ? RETURNING id"), before.UnixNano())
	if err != nil {
		return nil, err
	}
	ids, err := sortedIDs(rows)
	if err != nil {
		return nil, err
	}
	for _, id := range ids {
		if _, err := tx.ExecContext(ctx, d.q("DELETE FROM artifacts WHERE job_id = ?"), id); err != nil {
			return nil, err
		}
	}
	if err := tx.Commit(); err != nil {
		return nil, err
	}
	return ids, nil
}

// DeleteUploads deletes the upload records created before `before` that
// no job's request mentions. The test is a substring search through every
// job's request per old upload: a sweep's cost, paid every few minutes at
// most, not a request's.
func (d *DB) DeleteUploads(ctx context.Context, before time.Time) ([]string, error) {
	// A job's request and a selection's configuration (its reference
	// statistics) name the uploads they read.
	mention := func(col string) string {
		if d.Postgres() {
			return "position(convert_to(uploads.id, 'UTF8') IN " + col + ") > 0"
		}
		return "instr(CAST(" + col + " AS TEXT), uploads.id) > 0"
	}
	rows, err := d.w.QueryContext(ctx, d.q("DELETE FROM uploads WHERE created < ? AND NOT EXISTS (SELECT 1 FROM jobs WHERE "+mention("jobs.request")+
		") AND NOT EXISTS (SELECT 1 FROM selections WHERE "+mention("selections.config")+") RETURNING id"), before.UnixNano())
	if err != nil {
		return nil, err
	}
	return sortedIDs(rows)
}

// CreateSelection stores a selection with no batches.
func (d *DB) CreateSelection(ctx context.Context, s records.Selection) error {
	_, err := d.w.ExecContext(ctx, d.q("INSERT INTO selections (id, config, seq, created, updated) VALUES (?, ?, 0, ?, ?)"),
		s.ID, []byte(s.Config), s.Created.UnixNano(), s.Created.UnixNano())
	if err != nil && isUniqueViolation(err) {
		return fmt.Errorf("%w: selection %q exists", records.ErrConflict, s.ID)
	}
	return err
}

const selectionCols = "id, config, seq, created, updated"

func scanSelection(sc interface{ Scan(...any) error }) (records.Selection, error) {
	var s records.Selection
	var cfg []byte
	var created, updated int64
	err := sc.Scan(&s.ID, &cfg, &s.Seq, &created, &updated)
	s.Config = cfg
	s.Created, s.Updated = time.Unix(0, created).UTC(), time.Unix(0, updated).UTC()
	return s, err
}

// GetSelection returns a selection or ErrNotFound.
func (d *DB) GetSelection(ctx context.Context, id string) (records.Selection, error) {
	s, err := scanSelection(d.r.QueryRowContext(ctx, d.q("SELECT "+selectionCols+" FROM selections WHERE id = ?"), id))
	if errors.Is(err, sql.ErrNoRows) {
		return s, fmt.Errorf("%w: no selection %q", records.ErrNotFound, id)
	}
	return s, err
}

// ListSelections returns every selection, oldest first.
func (d *DB) ListSelections(ctx context.Context) ([]records.Selection, error) {
	rows, err := d.r.QueryContext(ctx, "SELECT "+selectionCols+" FROM selections ORDER BY created, id")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []records.Selection
	for rows.Next() {
		s, err := scanSelection(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// AppendSelectionBatch appends the next batch of a selection in one
// transaction; on Postgres the selection's row is locked (FOR UPDATE),
// so two replicas appending the same Seq serialise and the second gets
// ErrConflict.
func (d *DB) AppendSelectionBatch(ctx context.Context, b records.SelectionBatch) error {
	tx, err := d.w.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	lock := ""
	if d.Postgres() {
		lock = " FOR UPDATE"
	}
	var seq int64
	err = tx.QueryRowContext(ctx, d.q("SELECT seq FROM selections WHERE id = ?"+lock), b.SelectionID).Scan(&seq)
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("%w: no selection %q", records.ErrNotFound, b.SelectionID)
	}
	if err != nil {
		return err
	}
	if b.Seq != seq+1 {
		return fmt.Errorf("%w: selection %q is at batch %d, not %d", records.ErrConflict, b.SelectionID, seq, b.Seq-1)
	}
	data := b.Data
	if data == nil {
		data = []byte{}
	}
	if _, err := tx.ExecContext(ctx, d.q("INSERT INTO selection_batches (selection_id, seq, generator, nrows, ncols, data, created) VALUES (?, ?, ?, ?, ?, ?, ?)"),
		b.SelectionID, b.Seq, b.Generator, b.Rows, b.Cols, data, b.Created.UnixNano()); err != nil {
		if isUniqueViolation(err) {
			return fmt.Errorf("%w: selection %q has batch %d", records.ErrConflict, b.SelectionID, b.Seq)
		}
		return err
	}
	if _, err := tx.ExecContext(ctx, d.q("UPDATE selections SET seq = ?, updated = ? WHERE id = ?"), b.Seq, b.Created.UnixNano(), b.SelectionID); err != nil {
		return err
	}
	return tx.Commit()
}

// SelectionBatches returns the batches after seq `after`, in order.
func (d *DB) SelectionBatches(ctx context.Context, id string, after int64) ([]records.SelectionBatch, error) {
	var n int
	if err := d.r.QueryRowContext(ctx, d.q("SELECT COUNT(*) FROM selections WHERE id = ?"), id).Scan(&n); err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, fmt.Errorf("%w: no selection %q", records.ErrNotFound, id)
	}
	rows, err := d.r.QueryContext(ctx, d.q("SELECT seq, generator, nrows, ncols, data, created FROM selection_batches WHERE selection_id = ? AND seq > ? ORDER BY seq"), id, after)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []records.SelectionBatch
	for rows.Next() {
		b := records.SelectionBatch{SelectionID: id}
		var created int64
		if err := rows.Scan(&b.Seq, &b.Generator, &b.Rows, &b.Cols, &b.Data, &created); err != nil {
			return nil, err
		}
		b.Created = time.Unix(0, created).UTC()
		out = append(out, b)
	}
	return out, rows.Err()
}

// sortedIDs reads the ids a DELETE or UPDATE ... RETURNING id gives, in
// sorted order (RETURNING promises none), and closes rows.
func sortedIDs(rows *sql.Rows) ([]string, error) {
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids, rows.Err()
}
