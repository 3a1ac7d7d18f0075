package store

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/genlens/genlens/internal/store/records"
)

// InsertLLMRequest stores r and sets its ID (and Time, when zero).
func (d *DB) InsertLLMRequest(ctx context.Context, r *records.LLMRequest) error {
	rs := []records.LLMRequest{*r}
	if err := d.InsertLLMRequests(ctx, rs); err != nil {
		return err
	}
	*r = rs[0]
	return nil
}

// InsertLLMRequests stores the requests in one transaction, so that a
// busy proxy pays one commit (one fsync on SQLite) per batch, and sets
// their IDs (and Times, when zero).
func (d *DB) InsertLLMRequests(ctx context.Context, rs []records.LLMRequest) error {
	if len(rs) == 0 {
		return nil
	}
	leave, err := d.enter(ctx)
	if err != nil {
		return err
	}
	defer leave()
	tx, err := d.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store: llm requests: %w", err)
	}
	defer tx.Rollback()
	st, err := tx.PrepareContext(ctx, d.q(`INSERT INTO llm_requests (created_at, model, messages_hash, answer, stream, status, score,
		uncertainty, samples, error, upstream_seconds, sample_seconds, total_seconds)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`))
	if err != nil {
		return fmt.Errorf("store: llm requests: %w", err)
	}
	defer st.Close()
	for i := range rs {
		r := &rs[i]
		if r.Time.IsZero() {
			r.Time = time.Now().UTC()
		}
		var u any
		if !math.IsNaN(r.Uncertainty) && !math.IsInf(r.Uncertainty, 0) {
			u = r.Uncertainty
		}
		err := st.QueryRowContext(ctx, r.Time.UnixNano(), text(r.Model), text(r.MessagesHash), text(r.Answer), r.Stream, r.Status, text(r.Score),
			u, r.Samples, text(r.Error), finite(r.UpstreamSeconds), finite(r.SampleSeconds), finite(r.TotalSeconds)).Scan(&r.ID)
		if err != nil {
			return fmt.Errorf("store: llm request: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("store: llm requests: %w", err)
	}
	return nil
}

// text is s as both backends store it: Postgres text holds neither NUL
// nor invalid UTF-8, and one such answer would fail its whole batch
// there, so each becomes U+FFFD on both.
func text(s string) string {
	return strings.ToValidUTF8(strings.ReplaceAll(s, "\x00", "\uFFFD"), "\uFFFD")
}

func finite(x float64) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return 0
	}
	return x
}

// LLMRequests returns the stored requests q selects.
func (d *DB) LLMRequests(ctx context.Context, q records.LLMQuery) ([]records.LLMRequest, error) {
	limit := q.Limit
	if limit <= 0 {
		limit = 100
	}
	// Texts are cut as they are read: rows stored before the proxy
	// bounded them may be of any length.
	query := `SELECT id, created_at, substr(model, 1, 256), messages_hash, substr(answer, 1, 65537), stream, status, score, uncertainty, samples,
		substr(error, 1, 1001),
		upstream_seconds, sample_seconds, total_seconds FROM llm_requests WHERE created_at >= ?`
	args := []any{int64(math.MinInt64)}
	switch {
	case q.Since.IsZero() || q.Since.Before(records.MinTime):
	case q.Since.After(records.MaxTime): // UnixNano would wrap around into the past
		args[0] = int64(math.MaxInt64)
	default:
		args[0] = q.Since.UnixNano()
	}
	if !math.IsNaN(q.MinUncertainty) {
		query += " AND uncertainty >= ?"
		args = append(args, q.MinUncertainty)
	}
	if q.ByUncertainty {
		query += " AND uncertainty IS NOT NULL ORDER BY uncertainty DESC, id DESC"
	} else {
		query += " ORDER BY created_at DESC, id DESC"
	}
	query += " LIMIT ?"
	args = append(args, limit)
	rows, err := d.r.QueryContext(ctx, d.q(query), args...)
	if err != nil {
		return nil, fmt.Errorf("store: llm requests: %w", err)
	}
	defer rows.Close()
	var out []records.LLMRequest
	for rows.Next() {
		var r records.LLMRequest
		var t int64
		var u sql.NullFloat64
		if err := rows.Scan(&r.ID, &t, &r.Model, &r.MessagesHash, &r.Answer, &r.Stream, &r.Status, &r.Score, &u, &r.Samples, &r.Error,
			&r.UpstreamSeconds, &r.SampleSeconds, &r.TotalSeconds); err != nil {
			return nil, fmt.Errorf("store: llm requests: %w", err)
		}
		r.Time = time.Unix(0, t).UTC()
		r.Uncertainty = math.NaN()
		if u.Valid {
			r.Uncertainty = u.Float64
		}
		out = append(out, r)
	}
	return out, rows.Err()
}
