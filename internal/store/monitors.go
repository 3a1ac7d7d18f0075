package store

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/genlens/genlens/internal/store/records"

	"github.com/jackc/pgx/v5/pgconn"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// TimeStorable reports whether t is stored and read back exactly.
func TimeStorable(t time.Time) bool { return records.TimeStorable(t) }

// CreateMonitor stores m and sets its ID and Created. A name already
// taken is an error wrapping ErrConflict.
func (d *DB) CreateMonitor(ctx context.Context, m *records.Monitor) error {
	if m.Created.IsZero() {
		m.Created = time.Now().UTC()
	}
	tx, err := d.w.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var n int
	if err := tx.QueryRowContext(ctx, d.q("SELECT COUNT(*) FROM monitors WHERE name = ?"), m.Name).Scan(&n); err != nil {
		return err
	}
	if n > 0 {
		return fmt.Errorf("%w: a monitor named %q exists", records.ErrConflict, m.Name)
	}
	err = tx.QueryRowContext(ctx, d.q("INSERT INTO monitors (name, model, chunk_size, period, created_at) VALUES (?, ?, ?, ?, ?) RETURNING id"),
		m.Name, string(m.Model), m.ChunkSize, m.Period, m.Created.UnixNano()).Scan(&m.ID)
	if err != nil {
		if isUniqueViolation(err) { // a replica created it between our check and insert
			return fmt.Errorf("%w: a monitor named %q exists", records.ErrConflict, m.Name)
		}
		return err
	}
	return tx.Commit()
}

// isUniqueViolation recognises a unique-constraint failure of either
// backend by its code: SQLite's extended result codes, Postgres's SQLSTATE
// unique_violation.
func isUniqueViolation(err error) bool {
	var se *sqlite.Error
	var pe *pgconn.PgError
	switch {
	case errors.As(err, &se):
		return se.Code() == sqlite3.SQLITE_CONSTRAINT_UNIQUE || se.Code() == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY
	case errors.As(err, &pe):
		return pe.Code == "23505"
	}
	return false
}

// isForeignKeyViolation recognises a reference to a missing row: SQLite's
// extended result code, Postgres's SQLSTATE foreign_key_violation.
func isForeignKeyViolation(err error) bool {
	var se *sqlite.Error
	var pe *pgconn.PgError
	switch {
	case errors.As(err, &se):
		return se.Code() == sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY
	case errors.As(err, &pe):
		return pe.Code == "23503"
	}
	return false
}

// beginMonitor begins a write transaction, through the store's gate,
// that holds monitor: its row locked (for its deletion when forDelete),
// an error wrapping ErrNotFound when there is none. end rolls back what
// was not committed and leaves the gate.
func (d *DB) beginMonitor(ctx context.Context, monitor int64, forDelete bool) (tx *sql.Tx, end func(), err error) {
	leave, err := d.enter(ctx)
	if err != nil {
		return nil, nil, err
	}
	if tx, err = d.w.BeginTx(ctx, nil); err != nil {
		leave()
		return nil, nil, err
	}
	end = func() {
		tx.Rollback()
		leave()
	}
	if err := d.lockMonitor(ctx, tx, monitor, forDelete); err != nil {
		end()
		return nil, nil, err
	}
	return tx, end, nil
}

// lockMonitor makes sure the monitor exists within tx, an error
// wrapping ErrNotFound when not. On Postgres it locks its row: for
// update when deleting, else shared with the other writers of its rows,
// so that a deletion and the rows or labels written beside it take their
// locks in one order (the monitor, then its rows) and cannot deadlock:
// whichever comes second waits, and rows for a monitor deleted meanwhile
// find it gone. SQLite has one writer at a time.
func (d *DB) lockMonitor(ctx context.Context, tx *sql.Tx, id int64, forDelete bool) error {
	q := "SELECT id FROM monitors WHERE id = ?"
	if d.Postgres() {
		if forDelete {
			q += " FOR UPDATE"
		} else {
			q += " FOR KEY SHARE"
		}
	}
	var got int64
	err := tx.QueryRowContext(ctx, d.q(q), id).Scan(&got)
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("%w: no monitor %d", records.ErrNotFound, id)
	}
	return err
}

// monitorCols are a monitor's columns, its counts left 0 (see Counts).
const monitorCols = "m.id, m.name, m.model, m.chunk_size, m.period, m.created_at, 0, 0"

func scanMonitor(sc interface{ Scan(...any) error }) (records.Monitor, error) {
	var m records.Monitor
	var model string
	var created int64
	err := sc.Scan(&m.ID, &m.Name, &model, &m.ChunkSize, &m.Period, &created, &m.Rows, &m.Labelled)
	m.Model = []byte(model)
	m.Created = time.Unix(0, created).UTC()
	return m, err
}

// Monitor returns the monitor with id, without counting its rows (Rows
// and Labelled are 0: see Counts); a missing one is an error wrapping
// ErrNotFound. Ingestion looks a monitor up per batch, and counting would
// make that cost grow with the rows stored.
func (d *DB) Monitor(ctx context.Context, id int64) (*records.Monitor, error) {
	m, err := scanMonitor(d.r.QueryRowContext(ctx, d.q("SELECT "+monitorCols+" FROM monitors m WHERE m.id = ?"), id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("%w: no monitor %d", records.ErrNotFound, id)
	}
	if err != nil {
		return nil, err
	}
	return &m, nil
}

// Counts fills in m.Rows and m.Labelled.
func (d *DB) Counts(ctx context.Context, m *records.Monitor) error {
	// Two counts, each from an index (the labelled rows' is partial).
	return d.r.QueryRowContext(ctx, d.q(`SELECT (SELECT COUNT(*) FROM monitor_rows WHERE monitor_id = ?),
		(SELECT COUNT(*) FROM monitor_rows WHERE monitor_id = ? AND target IS NOT NULL)`), m.ID, m.ID).Scan(&m.Rows, &m.Labelled)
}

// Monitors returns every monitor, in order of creation, without
// counting their rows (see Counts).
func (d *DB) Monitors(ctx context.Context) ([]records.Monitor, error) {
	rows, err := d.r.QueryContext(ctx, "SELECT "+monitorCols+" FROM monitors m ORDER BY m.id")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []records.Monitor
	for rows.Next() {
		m, err := scanMonitor(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, rows.Err()
}

// rowsPerInsert bounds the rows of one INSERT statement: 6 parameters a
// row, 6,000 a statement, within both backends' limits (SQLite 32,766,
// Postgres 65,535).
const rowsPerInsert = 1000

// insertSQL is the INSERT of n rows.
func (d *DB) insertSQL(n int) string {
	var sb strings.Builder
	sb.WriteString("INSERT INTO monitor_rows (monitor_id, row_id, ts, features, prediction, estimate, target) VALUES ")
	for i := range n {
		if i > 0 {
			sb.WriteByte(',')
		}
		sb.WriteString("(?, ?, ?, ?, ?, ?, NULL)")
	}
	sb.WriteString(" ON CONFLICT (monitor_id, row_id) DO NOTHING")
	return d.q(sb.String())
}

// prepareInsert prepares the INSERT of rowsPerInsert rows, once, at Open:
// parsing a 6,000-parameter statement for every batch cost a tenth of
// ingestion. It must not run inside a transaction: on SQLite the
// transaction holds the only write connection, which the preparation
// would wait for.
func (d *DB) prepareInsert(ctx context.Context) error {
	st, err := d.w.PrepareContext(ctx, d.insertSQL(rowsPerInsert))
	if err != nil {
		return fmt.Errorf("store: preparing the rows insert: %w", err)
	}
	d.insertStmt = st
	return nil
}

// InsertRows stores a batch of rows of monitor in one transaction: all of
// them, or none when one fails. A row id the monitor holds already gives
// a *DuplicateError (ids within the batch are the caller's to check).
// It returns once the transaction has committed.
func (d *DB) InsertRows(ctx context.Context, monitor int64, rows []records.Row) error {
	if len(rows) == 0 {
		return nil
	}
	for i, r := range rows {
		if !r.Time.IsZero() && !TimeStorable(r.Time) {
			return fmt.Errorf("store: rows[%d] (id %q): timestamp %s is outside %s to %s, which the store holds exactly",
				i, r.ID, r.Time.Format(time.RFC3339), records.MinTime.Format(time.RFC3339), records.MaxTime.Format(time.RFC3339))
		}
	}
	tx, end, err := d.beginMonitor(ctx, monitor, false)
	if err != nil {
		return err
	}
	defer end()
	var inserted int64
	args := make([]any, 0, 6*min(len(rows), rowsPerInsert))
	for start := 0; start < len(rows); start += rowsPerInsert {
		part := rows[start:min(start+rowsPerInsert, len(rows))]
		args = args[:0]
		for _, r := range part {
			var ts any
			if !r.Time.IsZero() {
				ts = r.Time.UnixNano()
			}
			args = append(args, monitor, r.ID, ts, encodeFloats(r.Features), r.Prediction, r.Estimate)
		}
		var res sql.Result
		if len(part) == rowsPerInsert {
			res, err = tx.StmtContext(ctx, d.insertStmt).ExecContext(ctx, args...)
		} else {
			res, err = tx.ExecContext(ctx, d.insertSQL(len(part)), args...)
		}
		if err != nil {
			if isForeignKeyViolation(err) { // deleted while the batch was checked
				return fmt.Errorf("%w: no monitor %d", records.ErrNotFound, monitor)
			}
			return fmt.Errorf("store: inserting rows: %w", err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return err
		}
		inserted += n
	}
	if inserted != int64(len(rows)) {
		tx.Rollback()
		return d.findDuplicate(ctx, monitor, rows)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("store: committing rows: %w", err)
	}
	return nil
}

// findDuplicate names the first row of a failed batch whose id is stored.
func (d *DB) findDuplicate(ctx context.Context, monitor int64, rows []records.Row) error {
	stored := make(map[string]bool)
	for start := 0; start < len(rows); start += rowsPerInsert {
		part := rows[start:min(start+rowsPerInsert, len(rows))]
		args := []any{monitor}
		ph := make([]string, len(part))
		for i, r := range part {
			ph[i] = "?"
			args = append(args, r.ID)
		}
		q := d.q("SELECT row_id FROM monitor_rows WHERE monitor_id = ? AND row_id IN (" + strings.Join(ph, ",") + ")")
		rs, err := d.w.QueryContext(ctx, q, args...)
		if err != nil {
			return err
		}
		for rs.Next() {
			var id string
			if err := rs.Scan(&id); err != nil {
				rs.Close()
				return err
			}
			stored[id] = true
		}
		rs.Close()
	}
	for i, r := range rows {
		if stored[r.ID] {
			return &records.DuplicateError{Index: i, ID: r.ID}
		}
	}
	// Ids repeated within the batch: the caller should have refused it.
	seen := make(map[string]int)
	for i, r := range rows {
		if j, ok := seen[r.ID]; ok {
			return &records.DuplicateError{Index: i, ID: rows[j].ID}
		}
		seen[r.ID] = i
	}
	return errors.New("store: rows batch not stored (a concurrent writer?)")
}

func encodeFloats(v []float64) []byte {
	b := make([]byte, 8*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint64(b[8*i:], math.Float64bits(x))
	}
	return b
}

func decodeFloats(b []byte) []float64 {
	v := make([]float64, len(b)/8)
	for i := range v {
		v[i] = math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:]))
	}
	return v
}

// SetLabels stores the targets of rows of monitor in one transaction and
// their realised squared errors (target - prediction)². A label for a
// row that has one replaces it (a corrected label). An id the monitor
// does not hold gives an *UnknownRowError and stores nothing.
func (d *DB) SetLabels(ctx context.Context, monitor int64, labels []records.Label) error {
	tx, end, err := d.beginMonitor(ctx, monitor, false)
	if err != nil {
		return err
	}
	defer end()
	q := d.q("UPDATE monitor_rows SET target = ?, realized = (? - prediction) * (? - prediction) WHERE monitor_id = ? AND row_id = ?")
	stmt, err := tx.PrepareContext(ctx, q)
	if err != nil {
		return err
	}
	defer stmt.Close()
	for i, l := range labels {
		res, err := stmt.ExecContext(ctx, l.Target, l.Target, l.Target, monitor, l.ID)
		if err != nil {
			return fmt.Errorf("store: storing labels: %w", err)
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			return &records.UnknownRowError{Index: i, ID: l.ID}
		}
	}
	return tx.Commit()
}

// Series returns the monitor's rows in chunk order: by timestamp (then
// arrival) when byTime, else by arrival.
func (d *DB) Series(ctx context.Context, monitor int64, byTime bool) (*records.Series, error) {
	order := "seq"
	if byTime {
		order = "ts, seq"
	}
	s, err := d.readSeries(ctx, d.r, monitor, order, byTime, 0, -1)
	if err != nil {
		return nil, err
	}
	if byTime && d.Postgres() {
		nullsFirst(s)
	}
	return s, nil
}

// readSeries reads the monitor's rows (estimate, realized, ts, features)
// in order through q, the limit rows after offset when limit >= 0 (all
// when limit < 0), with their Times when times.
func (d *DB) readSeries(ctx context.Context, q interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
}, monitor int64, order string, times bool, offset, limit int) (*records.Series, error) {
	query := "SELECT estimate, realized, ts, features FROM monitor_rows WHERE monitor_id = ? ORDER BY " + order
	args := []any{monitor}
	if limit >= 0 {
		query += " LIMIT ? OFFSET ?"
		args = append(args, limit, offset)
	}
	rows, err := q.QueryContext(ctx, d.q(query), args...)
	if err != nil {
		return nil, err
	}
	s := &records.Series{}
	if err := scanSeries(s, rows, times); err != nil {
		return nil, err
	}
	return s, nil
}

// nullsFirst moves the rows without a timestamp, which Postgres sorts
// last, to the front, where SQLite sorts them (the zero time is the
// earliest), keeping the order within each part: both backends then
// give the same chunks. A period monitor's rows all have timestamps,
// but a database written before timestamps were checked may hold some
// without (0001-01-01 was stored as none).
func nullsFirst(s *records.Series) {
	k := len(s.Times)
	for k > 0 && s.Times[k-1].IsZero() {
		k--
	}
	if k == len(s.Times) || k == 0 {
		return
	}
	rotate(s.Estimates, k)
	rotate(s.Realized, k)
	rotate(s.Times, k)
	rotate(s.Features, k)
	rotate(s.Stamps, k)
}

// rotate moves v[k:] in front of v[:k].
func rotate[T any](v []T, k int) {
	slices.Reverse(v[:k])
	slices.Reverse(v[k:])
	slices.Reverse(v)
}

// scanLean appends rows of (estimate, realized) to s, without features
// or timestamps, and closes them.
func scanLean(s *records.Series, rows *sql.Rows) error {
	defer rows.Close()
	for rows.Next() {
		var est float64
		var real sql.NullFloat64
		if err := rows.Scan(&est, &real); err != nil {
			return err
		}
		r := math.NaN()
		if real.Valid {
			r = real.Float64
		}
		s.Estimates = append(s.Estimates, est)
		s.Realized = append(s.Realized, r)
		s.Features = append(s.Features, nil)
		s.Stamps = append(s.Stamps, time.Time{})
	}
	return rows.Err()
}

// scan appends the rows (estimate, realized, ts, features) to s and
// closes them.
func scanSeries(s *records.Series, rows *sql.Rows, byTime bool) error {
	defer rows.Close()
	var block []float64
	for rows.Next() {
		var est float64
		var real sql.NullFloat64
		var ts sql.NullInt64
		var feat []byte
		if err := rows.Scan(&est, &real, &ts, &feat); err != nil {
			return err
		}
		r, t := realizedAt(real, ts)
		s.Estimates = append(s.Estimates, est)
		s.Realized = append(s.Realized, r)
		// Rows' features share blocks of memory: one allocation per
		// row would dominate reading a large monitor.
		k := len(feat) / 8
		if len(block) < k {
			block = make([]float64, max(k, 8192))
		}
		row := block[:k:k]
		block = block[k:]
		for i := range row {
			row[i] = math.Float64frombits(binary.LittleEndian.Uint64(feat[8*i:]))
		}
		s.Features = append(s.Features, row)
		s.Stamps = append(s.Stamps, t)
		if byTime {
			s.Times = append(s.Times, t)
		}
	}
	return rows.Err()
}

// StoredRow is a row as stored, with its label when it has one.
type StoredRow struct {
	records.Row
	Target   float64 // NaN when unlabelled
	Realized float64 // (Target - Prediction)², NaN when unlabelled
}

// Rows returns the monitor's rows in arrival order, at most limit of them
// after skipping offset (limit ≤ 0: all).
func (d *DB) Rows(ctx context.Context, monitor int64, offset, limit int) ([]StoredRow, error) {
	q := "SELECT row_id, ts, features, prediction, estimate, target, realized FROM monitor_rows WHERE monitor_id = ? ORDER BY seq"
	args := []any{monitor}
	if limit > 0 {
		q += " LIMIT ? OFFSET ?"
		args = append(args, limit, offset)
	}
	rows, err := d.r.QueryContext(ctx, d.q(q), args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []StoredRow
	for rows.Next() {
		var r StoredRow
		var ts sql.NullInt64
		var feat []byte
		var target, real sql.NullFloat64
		if err := rows.Scan(&r.ID, &ts, &feat, &r.Prediction, &r.Estimate, &target, &real); err != nil {
			return nil, err
		}
		if ts.Valid {
			r.Time = time.Unix(0, ts.Int64).UTC()
		}
		r.Features = decodeFloats(feat)
		r.Target, r.Realized = math.NaN(), math.NaN()
		if target.Valid {
			r.Target, r.Realized = target.Float64, real.Float64
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// LastChunk returns the number n of the monitor's rows and the rows of
// its last chunk when cut into chunks of size rows in arrival order: the
// last n - ⌊(n-1)/size⌋·size rows. Both come from one snapshot of the
// database, so that a batch committed in between cannot mix into them.
// It reads only those rows, however many the monitor holds.
func (d *DB) LastChunk(ctx context.Context, monitor int64, size int) (int, *records.Series, error) {
	return d.LastChunks(ctx, monitor, size, 1, 1)
}

// snapshot begins a read-only transaction whose reads all see one
// snapshot of the database: repeatable read on Postgres; SQLite's
// transactions are serializable.
func (d *DB) snapshot(ctx context.Context) (*sql.Tx, error) {
	var opts *sql.TxOptions
	if d.Postgres() {
		opts = &sql.TxOptions{Isolation: sql.LevelRepeatableRead, ReadOnly: true}
	}
	return d.r.BeginTx(ctx, opts)
}

// LastChunks is LastChunk for the last k chunks (fewer when the monitor
// has fewer): the rows from chunk max(0, ⌊(n-1)/size⌋-k+1) on. Only the
// rows of the last withFeatures of them carry Features (and Stamps); the
// others' are nil (and zero), which saves decoding them.
func (d *DB) LastChunks(ctx context.Context, monitor int64, size, k, withFeatures int) (int, *records.Series, error) {
	tx, err := d.snapshot(ctx)
	if err != nil {
		return 0, nil, err
	}
	defer tx.Rollback()
	var n int
	if err := tx.QueryRowContext(ctx, d.q("SELECT COUNT(*) FROM monitor_rows WHERE monitor_id = ?"), monitor).Scan(&n); err != nil {
		return 0, nil, err
	}
	s := &records.Series{}
	if n == 0 {
		return 0, s, nil
	}
	last := (n - 1) / size
	first := max(0, last-k+1)
	// Newest first: the rows of the last withFeatures chunks with their
	// features, then the others' without.
	split := min(n-first*size, n-max(0, last-withFeatures+1)*size)
	s, err = d.readSeries(ctx, tx, monitor, "seq DESC", false, 0, split)
	if err != nil {
		return 0, nil, err
	}
	if rest := n - first*size - split; rest > 0 {
		rows, err := tx.QueryContext(ctx, d.q("SELECT estimate, realized FROM monitor_rows WHERE monitor_id = ? ORDER BY seq DESC LIMIT ? OFFSET ?"), monitor, rest, split)
		if err != nil {
			return 0, nil, err
		}
		if err := scanLean(s, rows); err != nil {
			return 0, nil, err
		}
	}
	slices.Reverse(s.Estimates)
	slices.Reverse(s.Realized)
	slices.Reverse(s.Features)
	slices.Reverse(s.Stamps)
	return n, s, nil
}

// SeriesPage returns the number n of the monitor's rows and, in chunk
// order (as Series), the rows [from, to) that span picks once it knows n,
// all from one snapshot of the database. Chunked by size (!byTime), only
// those rows are read, and span gets times nil; chunked by time, span
// gets every row's timestamp (the period chunks need them), and the
// Series holds every row's estimate, realised value and time (Times),
// with Features and Stamps only for [from, to) (nil and zero elsewhere):
// the features, which make most of a row's bytes, are read for the page
// only. An error from span is returned as it is.
func (d *DB) SeriesPage(ctx context.Context, monitor int64, byTime bool, span func(n int, times []time.Time) (from, to int, err error)) (int, *records.Series, error) {
	tx, err := d.snapshot(ctx)
	if err != nil {
		return 0, nil, err
	}
	defer tx.Rollback()
	s := &records.Series{}
	var n int
	// Rows without a timestamp first on both backends (Series moves
	// Postgres's, which it sorts last, to the front).
	const byTs = "ts IS NOT NULL, ts, seq"
	if byTime {
		rows, err := tx.QueryContext(ctx, d.q("SELECT estimate, realized, ts FROM monitor_rows WHERE monitor_id = ? ORDER BY "+byTs), monitor)
		if err != nil {
			return 0, nil, err
		}
		if err := scanTimed(s, rows); err != nil {
			return 0, nil, err
		}
		n = len(s.Estimates)
	} else if err := tx.QueryRowContext(ctx, d.q("SELECT COUNT(*) FROM monitor_rows WHERE monitor_id = ?"), monitor).Scan(&n); err != nil {
		return 0, nil, err
	}
	from, to, err := span(n, s.Times)
	if err != nil {
		return 0, nil, err
	}
	from, to = max(0, from), min(n, to)
	if from >= to {
		return n, s, nil
	}
	order := "seq"
	if byTime {
		order = byTs
	}
	page, err := d.readSeries(ctx, tx, monitor, order, false, from, to-from)
	if err != nil {
		return 0, nil, err
	}
	if len(page.Estimates) != to-from {
		return 0, nil, fmt.Errorf("store: monitor %d: read %d rows of [%d, %d)", monitor, len(page.Estimates), from, to)
	}
	if !byTime {
		return n, page, nil
	}
	copy(s.Features[from:to], page.Features)
	copy(s.Stamps[from:to], page.Stamps)
	return n, s, nil
}

// realizedAt reads a row's nullable columns: its realized squared error
// (NaN when unlabelled) and its time (zero when it has none).
func realizedAt(real sql.NullFloat64, ts sql.NullInt64) (float64, time.Time) {
	r := math.NaN()
	if real.Valid {
		r = real.Float64
	}
	var t time.Time
	if ts.Valid {
		t = time.Unix(0, ts.Int64).UTC()
	}
	return r, t
}

// scanTimed appends rows of (estimate, realized, ts) to s, with nil
// features and zero stamps, and closes them.
func scanTimed(s *records.Series, rows *sql.Rows) error {
	defer rows.Close()
	for rows.Next() {
		var est float64
		var real sql.NullFloat64
		var ts sql.NullInt64
		if err := rows.Scan(&est, &real, &ts); err != nil {
			return err
		}
		r, t := realizedAt(real, ts)
		s.Estimates = append(s.Estimates, est)
		s.Realized = append(s.Realized, r)
		s.Times = append(s.Times, t)
		s.Features = append(s.Features, nil)
		s.Stamps = append(s.Stamps, time.Time{})
	}
	return rows.Err()
}

// DeleteMonitor removes a monitor with its rows and labels, in one
// transaction; a missing one is an error wrapping ErrNotFound.
func (d *DB) DeleteMonitor(ctx context.Context, id int64) error {
	tx, end, err := d.beginMonitor(ctx, id, true)
	if err != nil {
		return err
	}
	defer end()
	// Rows first, explicitly: the foreign key's cascade would do it, but
	// only where the connection enforces foreign keys.
	if _, err := tx.ExecContext(ctx, d.q("DELETE FROM monitor_rows WHERE monitor_id = ?"), id); err != nil {
		return err
	}
	res, err := tx.ExecContext(ctx, d.q("DELETE FROM monitors WHERE id = ?"), id)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil {
		return err
	} else if n == 0 {
		return fmt.Errorf("%w: no monitor %d", records.ErrNotFound, id)
	}
	return tx.Commit()
}
