package jobrun

import (
	"context"
	"errors"
	"io/fs"
	"time"

	"github.com/genlens/genlens/internal/store/records"
)

// Retention. A sweep deletes, through the Store, the finished jobs older
// than Config.RetainJobs (with their artifacts) and the upload records
// older than Config.RetainUploads that no remaining job names; then it
// removes from DataDir/uploads every file older than RetainUploads that
// has no record. Rows go first and files after, so that no record ever
// points at a file a sweep removed: a crash between the two leaves files
// without records, which the next sweep removes. Every step is
// idempotent, so replicas sharing a database and a data directory may
// sweep at once.
//
// Two races are left to the unlikely. A job submitted naming an old
// upload while a sweep deletes it runs and fails with the upload's file
// missing (an input error; the client uploads again). The same bytes
// uploaded again between a sweep's check that the record is gone and
// its removal of the file leave a record without a file: submitting a
// job that names it is a field error saying so, and uploading the file
// once more puts it back. Uploads write their file before their record,
// so the file's modification time guards the usual case: a file younger
// than the cutoff is never removed.

// sweepEvery is how often the sweeper runs for retention periods
// retain: a tenth of the shorter, at most an hour.
func sweepEvery(retain ...time.Duration) time.Duration {
	every := time.Hour
	for _, d := range retain {
		if d > 0 {
			every = min(every, d/10)
		}
	}
	return max(every, time.Millisecond)
}

// Sweep deletes what the retention periods let go (see Config.RetainJobs)
// once, and returns how many jobs and upload records it deleted. With
// both periods 0 it does nothing. The service runs it at Start and then
// periodically; it is exported for tests and tools.
func (s *Service) Sweep(ctx context.Context) (jobs, uploads int, err error) {
	now := s.now()
	if d := s.cfg.RetainJobs; d > 0 {
		ids, err := s.store.DeleteJobs(ctx, now.Add(-d))
		if err != nil {
			return 0, 0, err
		}
		jobs = len(ids)
		if jobs > 0 {
			s.cfg.Logf("jobrun: retention: deleted %d jobs finished before %s", jobs, now.Add(-d).Format(time.RFC3339))
			s.cfg.OnDelete("job", jobs)
		}
	}
	if d := s.cfg.RetainUploads; d > 0 {
		cutoff := now.Add(-d)
		ids, err := s.store.DeleteUploads(ctx, cutoff)
		if err != nil {
			return jobs, 0, err
		}
		uploads = len(ids)
		if uploads > 0 {
			s.cfg.Logf("jobrun: retention: deleted %d uploads created before %s that no job names", uploads, cutoff.Format(time.RFC3339))
			s.cfg.OnDelete("upload", uploads)
		}
		if err := s.removeOrphans(ctx, cutoff); err != nil {
			return jobs, uploads, err
		}
	}
	return jobs, uploads, nil
}

// removeOrphans removes the upload files modified before cutoff that have
// no record: those whose record a sweep (this one, or an earlier one that
// crashed) deleted.
func (s *Service) removeOrphans(ctx context.Context, cutoff time.Time) error {
	entries, err := fs.ReadDir(s.fsys, ".")
	if err != nil {
		return err
	}
	for _, e := range entries {
		if err := ctx.Err(); err != nil {
			return err
		}
		if !uploadID.MatchString(e.Name()) {
			continue // temporaries and anything not an upload
		}
		if info, err := e.Info(); err != nil || !info.ModTime().Before(cutoff) {
			continue
		}
		if _, err := s.store.GetUpload(ctx, e.Name()); !errors.Is(err, records.ErrNotFound) {
			if err != nil {
				return err
			}
			continue // recorded: kept
		}
		// Look again just before removing: an upload of the same bytes
		// renames a fresh file into place before recording it.
		if info, err := s.uploads.Stat(e.Name()); err != nil || !info.ModTime().Before(cutoff) {
			continue
		}
		if err := s.uploads.Remove(e.Name()); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}

// sweeper runs Sweep every sweepEvery until ctx ends (the first sweep
// runs in Start).
func (s *Service) sweeper(ctx context.Context) {
	defer s.wg.Done()
	tick := time.NewTicker(sweepEvery(s.cfg.RetainJobs, s.cfg.RetainUploads))
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if _, _, err := s.Sweep(ctx); err != nil && ctx.Err() == nil {
			s.cfg.Logf("jobrun: retention sweep: %v", err)
		}
	}
}
