// Package storetest checks that an implementation of records.Store keeps
// its contract: the same suite runs against the in-memory store, SQLite
// and Postgres, as fstest.TestFS does for file systems.
package storetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/genlens/genlens/internal/store/records"
)

// Run runs the suite. open returns a new, empty store for each subtest
// (it may register cleanup with t).
func Run(t *testing.T, open func(t *testing.T) records.Store) {
	t.Run("JobLifecycle", func(t *testing.T) { testLifecycle(t, open(t)) })
	t.Run("ClaimOrderAndExclusive", func(t *testing.T) { testClaim(t, open(t)) })
	t.Run("Cancel", func(t *testing.T) { testCancel(t, open(t)) })
	t.Run("FailStale", func(t *testing.T) { testStale(t, open(t)) })
	t.Run("Artifacts", func(t *testing.T) { testArtifacts(t, open(t)) })
	t.Run("Uploads", func(t *testing.T) { testUploads(t, open(t)) })
	t.Run("DeleteJobs", func(t *testing.T) { testDeleteJobs(t, open(t)) })
	t.Run("DeleteUploads", func(t *testing.T) { testDeleteUploads(t, open(t)) })
	t.Run("ConcurrentDeletes", func(t *testing.T) { testConcurrentDeletes(t, open(t)) })
	t.Run("Selections", func(t *testing.T) { testSelections(t, open(t)) })
	t.Run("SelectionConcurrentAppends", func(t *testing.T) { testConcurrentAppends(t, open(t)) })
}

var t0 = time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)

func at(sec int) time.Time { return t0.Add(time.Duration(sec) * time.Second) }

func job(id string, created time.Time) records.Job {
	return records.Job{ID: id, Kind: "stats", Request: []byte(`{"in":"a.npy"}`), Status: records.StatusQueued, Created: created}
}

func sameTime(a, b time.Time) bool { return a.Sub(b).Abs() < time.Microsecond }

func testLifecycle(t *testing.T, s records.Store) {
	ctx := context.Background()
	if err := s.CreateJob(ctx, job("j1", at(0))); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateJob(ctx, job("j1", at(1))); !errors.Is(err, records.ErrConflict) {
		t.Errorf("duplicate CreateJob: err = %v, want ErrConflict", err)
	}
	if _, err := s.GetJob(ctx, "nope"); !errors.Is(err, records.ErrNotFound) {
		t.Errorf("GetJob(missing): err = %v, want ErrNotFound", err)
	}
	j, err := s.GetJob(ctx, "j1")
	if err != nil {
		t.Fatal(err)
	}
	if j.Status != records.StatusQueued || j.Kind != "stats" || string(j.Request) != `{"in":"a.npy"}` || !sameTime(j.Created, at(0)) || !j.Started.IsZero() {
		t.Errorf("stored job = %+v", j)
	}
	if n, err := s.CountJobs(ctx, records.StatusQueued); err != nil || n != 1 {
		t.Errorf("CountJobs(queued) = %d, %v; want 1", n, err)
	}
	j, ok, err := s.ClaimJob(ctx, "w1", at(2))
	if err != nil || !ok || j.ID != "j1" || j.Status != records.StatusRunning || j.ClaimedBy != "w1" || !sameTime(j.Started, at(2)) {
		t.Fatalf("ClaimJob = %+v, %v, %v", j, ok, err)
	}
	if _, ok, err := s.ClaimJob(ctx, "w2", at(2)); ok || err != nil {
		t.Errorf("second ClaimJob with nothing queued: ok = %v, err = %v", ok, err)
	}
	if _, err := s.Touch(ctx, "j1", "w2", 1, 2, at(3)); !errors.Is(err, records.ErrNotClaimed) {
		t.Errorf("Touch by another worker: err = %v, want ErrNotClaimed", err)
	}
	if _, err := s.Touch(ctx, "nope", "w1", 1, 2, at(3)); !errors.Is(err, records.ErrNotFound) {
		t.Errorf("Touch(missing): err = %v, want ErrNotFound", err)
	}
	cancel, err := s.Touch(ctx, "j1", "w1", 3, 10, at(3))
	if err != nil || cancel {
		t.Errorf("Touch = %v, %v", cancel, err)
	}
	j, _ = s.GetJob(ctx, "j1")
	if j.Done != 3 || j.Total != 10 || !sameTime(j.Heartbeat, at(3)) {
		t.Errorf("after Touch: done %d total %d heartbeat %v", j.Done, j.Total, j.Heartbeat)
	}
	if n, _ := s.CountJobs(ctx, records.StatusRunning); n != 1 {
		t.Errorf("CountJobs(running) = %d, want 1", n)
	}
	o := records.Outcome{Status: records.StatusSucceeded, Result: []byte(`{"n":3}`)}
	if err := s.FinishJob(ctx, "j1", "w2", o, at(4)); !errors.Is(err, records.ErrNotClaimed) {
		t.Errorf("FinishJob by another worker: err = %v, want ErrNotClaimed", err)
	}
	if err := s.FinishJob(ctx, "j1", "w1", o, at(4)); err != nil {
		t.Fatal(err)
	}
	j, _ = s.GetJob(ctx, "j1")
	if j.Status != records.StatusSucceeded || string(j.Result) != `{"n":3}` || !sameTime(j.Finished, at(4)) || j.Error != "" {
		t.Errorf("finished job = %+v", j)
	}
	if err := s.FinishJob(ctx, "j1", "w1", records.Outcome{Status: records.StatusFailed, Error: "x"}, at(5)); !errors.Is(err, records.ErrNotClaimed) {
		t.Errorf("FinishJob twice: err = %v, want ErrNotClaimed", err)
	}
	if _, err := s.Touch(ctx, "j1", "w1", 1, 1, at(5)); !errors.Is(err, records.ErrNotClaimed) {
		t.Errorf("Touch after finish: err = %v, want ErrNotClaimed", err)
	}

	// ListJobs: newest first, limited.
	for i := 2; i <= 4; i++ {
		if err := s.CreateJob(ctx, job(fmt.Sprintf("j%d", i), at(10*i))); err != nil {
			t.Fatal(err)
		}
	}
	all, err := s.ListJobs(ctx, 0)
	if err != nil || len(all) != 4 || all[0].ID != "j4" || all[3].ID != "j1" {
		t.Errorf("ListJobs(0) = %d jobs, %v", len(all), err)
	}
	two, err := s.ListJobs(ctx, 2)
	if err != nil || len(two) != 2 || two[0].ID != "j4" || two[1].ID != "j3" {
		t.Errorf("ListJobs(2) = %+v, %v", two, err)
	}
	// Failure outcome keeps kind and message.
	j, _, _ = s.ClaimJob(ctx, "w1", at(50))
	if err := s.FinishJob(ctx, j.ID, "w1", records.Outcome{Status: records.StatusFailed, ErrorKind: "input", Error: "a.npy: bad"}, at(51)); err != nil {
		t.Fatal(err)
	}
	j, _ = s.GetJob(ctx, j.ID)
	if j.Status != records.StatusFailed || j.ErrorKind != "input" || j.Error != "a.npy: bad" || j.Result != nil {
		t.Errorf("failed job = %+v", j)
	}
}

func testClaim(t *testing.T, s records.Store) {
	ctx := context.Background()
	// Created out of order; ties broken by id.
	for _, c := range []struct {
		id  string
		sec int
	}{{"c", 5}, {"a", 1}, {"b2", 3}, {"b1", 3}} {
		if err := s.CreateJob(ctx, job(c.id, at(c.sec))); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	for {
		j, ok, err := s.ClaimJob(ctx, "w", at(9))
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			break
		}
		got = append(got, j.ID)
	}
	if fmt.Sprint(got) != "[a b1 b2 c]" {
		t.Errorf("claim order = %v, want [a b1 b2 c]", got)
	}

	// Concurrent claimers never share a job.
	const n = 40
	for i := range n {
		if err := s.CreateJob(ctx, job(fmt.Sprintf("k%02d", i), at(100+i))); err != nil {
			t.Fatal(err)
		}
	}
	var (
		mu     sync.Mutex
		seen   = map[string]string{}
		wg     sync.WaitGroup
		errs   []error
		claims int
	)
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			worker := fmt.Sprintf("w%d", w)
			for {
				j, ok, err := s.ClaimJob(ctx, worker, at(200))
				mu.Lock()
				if err != nil {
					errs = append(errs, err)
				}
				if ok {
					claims++
					if prev, dup := seen[j.ID]; dup {
						errs = append(errs, fmt.Errorf("job %s claimed by %s and %s", j.ID, prev, worker))
					}
					seen[j.ID] = worker
				}
				mu.Unlock()
				if !ok || err != nil {
					return
				}
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		t.Error(err)
	}
	if claims != n || len(seen) != n {
		t.Errorf("%d claims of %d distinct jobs, want %d", claims, len(seen), n)
	}
}

func testCancel(t *testing.T, s records.Store) {
	ctx := context.Background()
	for _, id := range []string{"q", "r"} {
		if err := s.CreateJob(ctx, job(id, at(0))); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.CancelJob(ctx, "nope", "x", at(1)); !errors.Is(err, records.ErrNotFound) {
		t.Errorf("CancelJob(missing): err = %v", err)
	}
	j, err := s.CancelJob(ctx, "q", "canceled before it started", at(1))
	if err != nil || j.Status != records.StatusCanceled || j.ErrorKind != "canceled" || j.Error != "canceled before it started" || !sameTime(j.Finished, at(1)) {
		t.Errorf("CancelJob(queued) = %+v, %v", j, err)
	}
	j, ok, err := s.ClaimJob(ctx, "w", at(2))
	if err != nil || !ok || j.ID != "r" {
		t.Fatalf("ClaimJob after cancel = %+v %v %v (a canceled job must not be claimed)", j, ok, err)
	}
	j, err = s.CancelJob(ctx, "r", "x", at(3))
	if err != nil || j.Status != records.StatusRunning || !j.CancelRequested {
		t.Errorf("CancelJob(running) = %+v, %v", j, err)
	}
	cancel, err := s.Touch(ctx, "r", "w", 1, 2, at(4))
	if err != nil || !cancel {
		t.Errorf("Touch after cancel request = %v, %v; want true", cancel, err)
	}
	if err := s.FinishJob(ctx, "r", "w", records.Outcome{Status: records.StatusCanceled, ErrorKind: "canceled", Error: "canceled"}, at(5)); err != nil {
		t.Fatal(err)
	}
	j, err = s.CancelJob(ctx, "r", "again", at(6))
	if err != nil || j.Status != records.StatusCanceled || j.Error != "canceled" || !sameTime(j.Finished, at(5)) {
		t.Errorf("CancelJob(terminal) changed the job: %+v, %v", j, err)
	}
}

func testStale(t *testing.T, s records.Store) {
	ctx := context.Background()
	for _, id := range []string{"a", "b", "c"} {
		if err := s.CreateJob(ctx, job(id, at(0))); err != nil {
			t.Fatal(err)
		}
	}
	s.ClaimJob(ctx, "w1", at(1)) // a
	s.ClaimJob(ctx, "w2", at(1)) // b
	if _, err := s.Touch(ctx, "b", "w2", 0, 1, at(10)); err != nil {
		t.Fatal(err)
	}
	ids, err := s.FailStale(ctx, at(5), "interrupted", at(11))
	if err != nil || fmt.Sprint(ids) != "[a]" {
		t.Errorf("FailStale = %v, %v; want [a]", ids, err)
	}
	j, _ := s.GetJob(ctx, "a")
	if j.Status != records.StatusFailed || j.ErrorKind != "internal" || j.Error != "interrupted" || !sameTime(j.Finished, at(11)) {
		t.Errorf("stale job = %+v", j)
	}
	if err := s.FinishJob(ctx, "a", "w1", records.Outcome{Status: records.StatusSucceeded}, at(12)); !errors.Is(err, records.ErrNotClaimed) {
		t.Errorf("FinishJob on a reaped job: err = %v, want ErrNotClaimed", err)
	}
	if j, _ := s.GetJob(ctx, "c"); j.Status != records.StatusQueued {
		t.Errorf("FailStale touched a queued job: %+v", j)
	}
	ids, err = s.FailStale(ctx, at(100), "restart", at(100))
	if err != nil || fmt.Sprint(ids) != "[b]" {
		t.Errorf("FailStale(now) = %v, %v; want [b]", ids, err)
	}
}

func testArtifacts(t *testing.T, s records.Store) {
	ctx := context.Background()
	if l, err := s.ListArtifacts(ctx, "j"); err != nil || len(l) != 0 {
		t.Errorf("ListArtifacts(none) = %v, %v", l, err)
	}
	big := bytes.Repeat([]byte{0, 1, 2, 255}, 1<<16)
	for _, a := range []records.Artifact{
		{JobID: "j", Name: "b.png", ContentType: "image/png", Data: big},
		{JobID: "j", Name: "a.csv", ContentType: "text/csv", Data: []byte("x\n1\n")},
		{JobID: "k", Name: "a.csv", ContentType: "text/csv", Data: []byte("other")},
		{JobID: "j", Name: "a.csv", ContentType: "text/csv; charset=utf-8", Data: []byte("x\n2\n")},
	} {
		if err := s.PutArtifact(ctx, a); err != nil {
			t.Fatal(err)
		}
	}
	l, err := s.ListArtifacts(ctx, "j")
	if err != nil || len(l) != 2 || l[0].Name != "a.csv" || l[0].Size != 4 || l[1].Name != "b.png" || l[1].Size != int64(len(big)) {
		t.Errorf("ListArtifacts = %+v, %v", l, err)
	}
	a, err := s.GetArtifact(ctx, "j", "a.csv")
	if err != nil || string(a.Data) != "x\n2\n" || a.ContentType != "text/csv; charset=utf-8" {
		t.Errorf("GetArtifact (replaced) = %+v, %v", a, err)
	}
	a, err = s.GetArtifact(ctx, "j", "b.png")
	if err != nil || !bytes.Equal(a.Data, big) {
		t.Errorf("GetArtifact(binary) differs, err %v", err)
	}
	if _, err := s.GetArtifact(ctx, "j", "c"); !errors.Is(err, records.ErrNotFound) {
		t.Errorf("GetArtifact(missing): err = %v", err)
	}
}

func testUploads(t *testing.T, s records.Store) {
	ctx := context.Background()
	u := records.Upload{ID: "ab12.npy", Name: "real features.npy", Size: 128, SHA256: "ab12", Created: at(0)}
	if err := s.PutUpload(ctx, u); err != nil {
		t.Fatal(err)
	}
	dup := u
	dup.Name, dup.Created = "again.npy", at(5)
	if err := s.PutUpload(ctx, dup); err != nil {
		t.Errorf("PutUpload of an existing content id: %v, want nil", err)
	}
	got, err := s.GetUpload(ctx, "ab12.npy")
	if err != nil || got.Name != u.Name || got.Size != 128 || got.SHA256 != "ab12" || !sameTime(got.Created, at(5)) {
		t.Errorf("GetUpload = %+v, %v; want the first record, created at the later upload (%v)", got, err, at(5))
	}
	// A record of an earlier time (a replica's clock behind) moves
	// nothing back.
	dup.Created = at(2)
	if err := s.PutUpload(ctx, dup); err != nil {
		t.Fatal(err)
	}
	if got, err := s.GetUpload(ctx, "ab12.npy"); err != nil || !sameTime(got.Created, at(5)) {
		t.Errorf("after an earlier record: created %v, %v; want %v", got.Created, err, at(5))
	}
	if _, err := s.GetUpload(ctx, "x"); !errors.Is(err, records.ErrNotFound) {
		t.Errorf("GetUpload(missing): err = %v", err)
	}
}

// finished stores a job created at created, claimed and finished with
// status st at fin (canceled: while queued).
func finished(t *testing.T, s records.Store, id string, request string, st records.Status, created, fin time.Time) {
	t.Helper()
	ctx := context.Background()
	j := job(id, created)
	j.Request = []byte(request)
	if err := s.CreateJob(ctx, j); err != nil {
		t.Fatal(err)
	}
	if st == records.StatusCanceled {
		if _, err := s.CancelJob(ctx, id, "canceled", fin); err != nil {
			t.Fatal(err)
		}
		return
	}
	c, ok, err := s.ClaimJob(ctx, "w", created)
	if err != nil || !ok || c.ID != id {
		t.Fatalf("claiming %s: %+v, %v, %v", id, c, ok, err)
	}
	if st == records.StatusRunning {
		return
	}
	if err := s.FinishJob(ctx, id, "w", records.Outcome{Status: st, Result: []byte(`{}`)}, fin); err != nil {
		t.Fatal(err)
	}
}

func testDeleteJobs(t *testing.T, s records.Store) {
	ctx := context.Background()
	// Each job is claimed before the next is created, so the claims
	// take them in this order.
	finished(t, s, "old-ok", `{}`, records.StatusSucceeded, at(0), at(10))
	finished(t, s, "old-failed", `{}`, records.StatusFailed, at(1), at(20))
	finished(t, s, "old-canceled", `{}`, records.StatusCanceled, at(2), at(30))
	finished(t, s, "edge", `{}`, records.StatusSucceeded, at(3), at(100)) // finished exactly at the cutoff: kept
	finished(t, s, "recent", `{}`, records.StatusSucceeded, at(4), at(150))
	finished(t, s, "running", `{}`, records.StatusRunning, at(5), time.Time{}) // claimed at 5, running since
	if err := s.CreateJob(ctx, job("queued", at(6))); err != nil {             // queued since 6
		t.Fatal(err)
	}
	for _, id := range []string{"old-ok", "old-failed", "recent"} {
		if err := s.PutArtifact(ctx, records.Artifact{JobID: id, Name: "t.csv", ContentType: "text/csv", Data: []byte("a\n")}); err != nil {
			t.Fatal(err)
		}
	}
	ids, err := s.DeleteJobs(ctx, at(100))
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(ids) != "[old-canceled old-failed old-ok]" {
		t.Errorf("DeleteJobs(at 100) = %v, want [old-canceled old-failed old-ok]", ids)
	}
	for _, id := range []string{"old-ok", "old-failed", "old-canceled"} {
		if _, err := s.GetJob(ctx, id); !errors.Is(err, records.ErrNotFound) {
			t.Errorf("GetJob(%s) after delete: err = %v, want ErrNotFound", id, err)
		}
		if _, err := s.GetArtifact(ctx, id, "t.csv"); !errors.Is(err, records.ErrNotFound) {
			t.Errorf("GetArtifact(%s) after delete: err = %v, want ErrNotFound", id, err)
		}
		if a, err := s.ListArtifacts(ctx, id); err != nil || len(a) != 0 {
			t.Errorf("ListArtifacts(%s) after delete = %v, %v; want none", id, a, err)
		}
	}
	for _, id := range []string{"edge", "recent", "running", "queued"} {
		if _, err := s.GetJob(ctx, id); err != nil {
			t.Errorf("GetJob(%s): %v; it must be kept", id, err)
		}
	}
	if _, err := s.GetArtifact(ctx, "recent", "t.csv"); err != nil {
		t.Errorf("the kept job's artifact: %v", err)
	}
	// Idempotent: a second sweep (another replica's) finds nothing.
	if ids, err := s.DeleteJobs(ctx, at(100)); err != nil || len(ids) != 0 {
		t.Errorf("second DeleteJobs = %v, %v; want none", ids, err)
	}
	// However far the cutoff, queued and running jobs stay.
	ids, err = s.DeleteJobs(ctx, at(1_000_000))
	if err != nil || fmt.Sprint(ids) != "[edge recent]" {
		t.Errorf("DeleteJobs(far future) = %v, %v; want [edge recent]", ids, err)
	}
	all, err := s.ListJobs(ctx, 0)
	if err != nil || len(all) != 2 || all[0].ID != "queued" || all[1].ID != "running" {
		t.Errorf("left = %+v, %v; want queued and running", all, err)
	}
	if n, _ := s.CountJobs(ctx, records.StatusQueued); n != 1 {
		t.Errorf("CountJobs(queued) = %d, want 1", n)
	}
}

func testDeleteUploads(t *testing.T, s records.Store) {
	ctx := context.Background()
	id := func(c byte, ext string) string { return string(bytes.Repeat([]byte{c}, 32)) + ext }
	a, b, c, d, e := id('a', ".npy"), id('b', ".csv"), id('c', ".npy"), id('d', ".npy"), id('e', ".npy")
	for i, u := range []string{a, b, c, d, e} {
		created := at(10 * i) // a 0, b 10, c 20, d 30, e 40
		if err := s.PutUpload(ctx, records.Upload{ID: u, Name: "f", Size: 1, SHA256: u[:32], Created: created}); err != nil {
			t.Fatal(err)
		}
	}
	// b is named by a finished job, c by a queued one; a, d and e by
	// none. The cutoff 30 takes a only (d was created at it, e after).
	finished(t, s, "j-b", `{"real":"`+b+`","k":5}`, records.StatusSucceeded, at(1), at(2))
	qj := job("j-c", at(3))
	qj.Request = []byte(`{"files":["x","` + c + `"]}`)
	if err := s.CreateJob(ctx, qj); err != nil {
		t.Fatal(err)
	}
	// f is named by a selection's reference only.
	f := id('f', ".npz")
	if err := s.PutUpload(ctx, records.Upload{ID: f, Name: "ref", Size: 1, SHA256: f[:32], Created: at(0)}); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateSelection(ctx, records.Selection{ID: "sel-f", Config: []byte(`{"method":"fid","ref":"` + f + `"}`), Created: at(0)}); err != nil {
		t.Fatal(err)
	}
	ids, err := s.DeleteUploads(ctx, at(30))
	if err != nil || fmt.Sprint(ids) != fmt.Sprint([]string{a}) {
		t.Errorf("DeleteUploads(at 30) = %v, %v; want [%s]", ids, err, a)
	}
	if _, err := s.GetUpload(ctx, a); !errors.Is(err, records.ErrNotFound) {
		t.Errorf("GetUpload(a) after delete: err = %v, want ErrNotFound", err)
	}
	for _, u := range []string{b, c, d, e} {
		if _, err := s.GetUpload(ctx, u); err != nil {
			t.Errorf("GetUpload(%s): %v; it must be kept", u, err)
		}
	}
	if ids, err := s.DeleteUploads(ctx, at(30)); err != nil || len(ids) != 0 {
		t.Errorf("second DeleteUploads = %v, %v; want none", ids, err)
	}
	// Once the job naming b is deleted, b goes too; c stays while its
	// job does.
	if _, err := s.DeleteJobs(ctx, at(100)); err != nil {
		t.Fatal(err)
	}
	ids, err = s.DeleteUploads(ctx, at(1000))
	if err != nil || fmt.Sprint(ids) != fmt.Sprint([]string{b, d, e}) {
		t.Errorf("DeleteUploads(at 1000) = %v, %v; want [%s %s %s]", ids, err, b, d, e)
	}
	if _, err := s.GetUpload(ctx, c); err != nil {
		t.Errorf("GetUpload(c), named by a queued job: %v", err)
	}
	if _, err := s.GetUpload(ctx, f); err != nil {
		t.Errorf("GetUpload(f), the reference of a selection: %v", err)
	}
	// A deleted upload recorded again is a new record.
	if err := s.PutUpload(ctx, records.Upload{ID: a, Name: "again", Size: 1, SHA256: a[:32], Created: at(2000)}); err != nil {
		t.Fatal(err)
	}
	if u, err := s.GetUpload(ctx, a); err != nil || u.Name != "again" || !sameTime(u.Created, at(2000)) {
		t.Errorf("re-recorded upload = %+v, %v", u, err)
	}
}

// testConcurrentDeletes sweeps from several goroutines at once, as
// replicas sharing a database do: every job and upload is deleted, and
// each id is returned to one sweeper only.
func testConcurrentDeletes(t *testing.T, s records.Store) {
	ctx := context.Background()
	const n = 20
	for i := range n {
		finished(t, s, fmt.Sprintf("j%02d", i), `{}`, records.StatusFailed, at(i), at(n+i))
		u := fmt.Sprintf("%032x.npy", i)
		if err := s.PutUpload(ctx, records.Upload{ID: u, Name: "f", Size: 1, SHA256: u[:32], Created: at(i)}); err != nil {
			t.Fatal(err)
		}
	}
	var mu sync.Mutex
	seen := map[string]int{}
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			jobs, err := s.DeleteJobs(ctx, at(1000))
			if err != nil {
				t.Error(err)
			}
			uploads, err := s.DeleteUploads(ctx, at(1000))
			if err != nil {
				t.Error(err)
			}
			mu.Lock()
			for _, id := range append(jobs, uploads...) {
				seen[id]++
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	if len(seen) != 2*n {
		t.Errorf("%d ids deleted, want %d", len(seen), 2*n)
	}
	for id, k := range seen {
		if k != 1 {
			t.Errorf("%s returned by %d sweepers, want 1", id, k)
		}
	}
	if all, err := s.ListJobs(ctx, 0); err != nil || len(all) != 0 {
		t.Errorf("jobs left: %d, %v", len(all), err)
	}
}

func testSelections(t *testing.T, s records.Store) {
	ctx := context.Background()
	sel := records.Selection{ID: "s1", Config: []byte(`{"algorithm":"fid-ucb"}`), Created: at(0)}
	if err := s.CreateSelection(ctx, sel); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateSelection(ctx, sel); !errors.Is(err, records.ErrConflict) {
		t.Errorf("duplicate CreateSelection: err = %v", err)
	}
	if err := s.CreateSelection(ctx, records.Selection{ID: "s0", Config: []byte(`{}`), Created: at(-1)}); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetSelection(ctx, "s1")
	if err != nil || got.Seq != 0 || string(got.Config) != `{"algorithm":"fid-ucb"}` || !sameTime(got.Updated, at(0)) {
		t.Errorf("GetSelection = %+v, %v", got, err)
	}
	if _, err := s.GetSelection(ctx, "x"); !errors.Is(err, records.ErrNotFound) {
		t.Errorf("GetSelection(missing): err = %v", err)
	}
	batch := func(seq int64, g int, data []byte) records.SelectionBatch {
		return records.SelectionBatch{SelectionID: "s1", Seq: seq, Generator: g, Rows: 1, Cols: len(data) / 8, Data: data, Created: at(int(seq))}
	}
	d1 := []byte{1, 2, 3, 4, 5, 6, 7, 8}
	d2 := bytes.Repeat([]byte{9}, 16)
	if err := s.AppendSelectionBatch(ctx, batch(2, 0, d1)); !errors.Is(err, records.ErrConflict) {
		t.Errorf("append with a gap: err = %v, want ErrConflict", err)
	}
	if err := s.AppendSelectionBatch(ctx, batch(1, 0, d1)); err != nil {
		t.Fatal(err)
	}
	if err := s.AppendSelectionBatch(ctx, batch(1, 1, d2)); !errors.Is(err, records.ErrConflict) {
		t.Errorf("append of a taken seq: err = %v, want ErrConflict", err)
	}
	if err := s.AppendSelectionBatch(ctx, batch(2, 1, d2)); err != nil {
		t.Fatal(err)
	}
	missing := batch(1, 0, d1)
	missing.SelectionID = "x"
	if err := s.AppendSelectionBatch(ctx, missing); !errors.Is(err, records.ErrNotFound) {
		t.Errorf("append to a missing selection: err = %v", err)
	}
	got, _ = s.GetSelection(ctx, "s1")
	if got.Seq != 2 || !sameTime(got.Updated, at(2)) {
		t.Errorf("after two appends: seq %d updated %v", got.Seq, got.Updated)
	}
	bs, err := s.SelectionBatches(ctx, "s1", 0)
	if err != nil || len(bs) != 2 || bs[0].Seq != 1 || bs[1].Seq != 2 || bs[1].Generator != 1 || bs[1].Cols != 2 || !bytes.Equal(bs[0].Data, d1) || !bytes.Equal(bs[1].Data, d2) {
		t.Errorf("SelectionBatches(0) = %+v, %v", bs, err)
	}
	bs, err = s.SelectionBatches(ctx, "s1", 1)
	if err != nil || len(bs) != 1 || bs[0].Seq != 2 {
		t.Errorf("SelectionBatches(1) = %+v, %v", bs, err)
	}
	if _, err := s.SelectionBatches(ctx, "x", 0); !errors.Is(err, records.ErrNotFound) {
		t.Errorf("SelectionBatches(missing): err = %v", err)
	}
	all, err := s.ListSelections(ctx)
	if err != nil || len(all) != 2 || all[0].ID != "s0" || all[1].ID != "s1" || all[1].Seq != 2 {
		t.Errorf("ListSelections = %+v, %v", all, err)
	}
}

// testConcurrentAppends: writers racing for the next Seq (replicas
// posting batches at once) each either append or get ErrConflict, never
// another error, and the log ends with every batch once, without gaps.
func testConcurrentAppends(t *testing.T, s records.Store) {
	ctx := context.Background()
	if err := s.CreateSelection(ctx, records.Selection{ID: "c", Config: []byte(`{}`), Created: at(0)}); err != nil {
		t.Fatal(err)
	}
	const writers, each = 4, 8
	var wg sync.WaitGroup
	errs := make(chan error, writers*each)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := 0; k < each; {
				sel, err := s.GetSelection(ctx, "c")
				if err != nil {
					errs <- err
					return
				}
				b := records.SelectionBatch{SelectionID: "c", Seq: sel.Seq + 1, Generator: w, Rows: 1, Cols: 1,
					Data: []byte{byte(k), 0, 0, 0, 0, 0, 0, 0}, Created: at(int(sel.Seq + 1))}
				switch err := s.AppendSelectionBatch(ctx, b); {
				case err == nil:
					k++
				case errors.Is(err, records.ErrConflict):
				default:
					errs <- fmt.Errorf("writer %d: %w (want nil or ErrConflict)", w, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	bs, err := s.SelectionBatches(ctx, "c", 0)
	if err != nil {
		t.Fatal(err)
	}
	perWriter := map[int]int{}
	for i, b := range bs {
		if b.Seq != int64(i+1) {
			t.Fatalf("batch %d has Seq %d", i, b.Seq)
		}
		if int(b.Data[0]) != perWriter[b.Generator] {
			t.Errorf("writer %d's batch %d stored as its %d-th", b.Generator, b.Data[0], perWriter[b.Generator])
		}
		perWriter[b.Generator]++
	}
	if len(bs) != writers*each {
		t.Errorf("%d batches, want %d", len(bs), writers*each)
	}
	if sel, _ := s.GetSelection(ctx, "c"); sel.Seq != writers*each {
		t.Errorf("Seq = %d, want %d", sel.Seq, writers*each)
	}
}
