package jobrun

import (
	"bytes"
	"context"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/genlens/genlens/internal/store/records"
)

// MemStore is a Store in memory: for tests, and for a single process
// that needs no durability. The zero value is not usable; call
// NewMemStore.
type MemStore struct {
	mu         sync.Mutex
	jobs       map[string]*records.Job
	artifacts  map[string]map[string]records.Artifact
	uploads    map[string]records.Upload
	selections map[string]*records.Selection
	batches    map[string][]records.SelectionBatch
}

var _ records.Store = (*MemStore)(nil)

// NewMemStore returns an empty MemStore.
func NewMemStore() *MemStore {
	return &MemStore{
		jobs:       map[string]*records.Job{},
		artifacts:  map[string]map[string]records.Artifact{},
		uploads:    map[string]records.Upload{},
		selections: map[string]*records.Selection{},
		batches:    map[string][]records.SelectionBatch{},
	}
}

// cloneJob returns a deep copy, so that callers never share slices with
// the store (a SQL store hands out fresh copies too).
func cloneJob(j records.Job) records.Job {
	j.Request = bytes.Clone(j.Request)
	j.Result = bytes.Clone(j.Result)
	return j
}

func (m *MemStore) CreateJob(ctx context.Context, j records.Job) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.jobs[j.ID]; ok {
		return records.ErrConflict
	}
	c := cloneJob(j)
	m.jobs[j.ID] = &c
	return nil
}

func (m *MemStore) GetJob(ctx context.Context, id string) (records.Job, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	j, ok := m.jobs[id]
	if !ok {
		return records.Job{}, records.ErrNotFound
	}
	return cloneJob(*j), nil
}

func (m *MemStore) ListJobs(ctx context.Context, limit int) ([]records.Job, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]records.Job, 0, len(m.jobs))
	for _, j := range m.jobs {
		out = append(out, cloneJob(*j))
	}
	sort.Slice(out, func(a, b int) bool {
		if !out[a].Created.Equal(out[b].Created) {
			return out[a].Created.After(out[b].Created)
		}
		return out[a].ID < out[b].ID
	})
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

func (m *MemStore) CountJobs(ctx context.Context, s records.Status) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for _, j := range m.jobs {
		if j.Status == s {
			n++
		}
	}
	return n, nil
}

func (m *MemStore) ClaimJob(ctx context.Context, worker string, now time.Time) (records.Job, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var best *records.Job
	for _, j := range m.jobs {
		if j.Status != records.StatusQueued {
			continue
		}
		if best == nil || j.Created.Before(best.Created) || (j.Created.Equal(best.Created) && j.ID < best.ID) {
			best = j
		}
	}
	if best == nil {
		return records.Job{}, false, nil
	}
	best.Status = records.StatusRunning
	best.ClaimedBy = worker
	best.Started = now
	best.Heartbeat = now
	return cloneJob(*best), true, nil
}

// running returns the job id if it runs under worker.
func (m *MemStore) running(id, worker string) (*records.Job, error) {
	j, ok := m.jobs[id]
	if !ok {
		return nil, records.ErrNotFound
	}
	if j.Status != records.StatusRunning || j.ClaimedBy != worker {
		return nil, records.ErrNotClaimed
	}
	return j, nil
}

func (m *MemStore) Touch(ctx context.Context, id, worker string, done, total int, now time.Time) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	j, err := m.running(id, worker)
	if err != nil {
		return false, err
	}
	j.Done, j.Total, j.Heartbeat = done, total, now
	return j.CancelRequested, nil
}

func (m *MemStore) FinishJob(ctx context.Context, id, worker string, o records.Outcome, now time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	j, err := m.running(id, worker)
	if err != nil {
		return err
	}
	j.Status = o.Status
	j.Result = bytes.Clone(o.Result)
	j.ErrorKind, j.Error = o.ErrorKind, o.Error
	j.Finished = now
	return nil
}

func (m *MemStore) CancelJob(ctx context.Context, id, msg string, now time.Time) (records.Job, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	j, ok := m.jobs[id]
	if !ok {
		return records.Job{}, records.ErrNotFound
	}
	switch j.Status {
	case records.StatusQueued:
		j.Status, j.ErrorKind, j.Error, j.Finished = records.StatusCanceled, "canceled", msg, now
	case records.StatusRunning:
		j.CancelRequested = true
	}
	return cloneJob(*j), nil
}

func (m *MemStore) FailStale(ctx context.Context, before time.Time, msg string, now time.Time) ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var ids []string
	for _, j := range m.jobs {
		if j.Status == records.StatusRunning && j.Heartbeat.Before(before) {
			j.Status, j.ErrorKind, j.Error, j.Finished = records.StatusFailed, "internal", msg, now
			ids = append(ids, j.ID)
		}
	}
	slices.Sort(ids)
	return ids, nil
}

func (m *MemStore) PutArtifact(ctx context.Context, a records.Artifact) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.artifacts[a.JobID] == nil {
		m.artifacts[a.JobID] = map[string]records.Artifact{}
	}
	a.Data = bytes.Clone(a.Data)
	m.artifacts[a.JobID][a.Name] = a
	return nil
}

func (m *MemStore) GetArtifact(ctx context.Context, jobID, name string) (records.Artifact, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	a, ok := m.artifacts[jobID][name]
	if !ok {
		return records.Artifact{}, records.ErrNotFound
	}
	a.Data = bytes.Clone(a.Data)
	return a, nil
}

func (m *MemStore) ListArtifacts(ctx context.Context, jobID string) ([]records.ArtifactInfo, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := []records.ArtifactInfo{}
	for _, a := range m.artifacts[jobID] {
		out = append(out, records.ArtifactInfo{Name: a.Name, ContentType: a.ContentType, Size: int64(len(a.Data))})
	}
	slices.SortFunc(out, func(a, b records.ArtifactInfo) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

func (m *MemStore) PutUpload(ctx context.Context, u records.Upload) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if old, ok := m.uploads[u.ID]; !ok {
		m.uploads[u.ID] = u
	} else if u.Created.After(old.Created) {
		old.Created = u.Created
		m.uploads[u.ID] = old
	}
	return nil
}

func (m *MemStore) GetUpload(ctx context.Context, id string) (records.Upload, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	u, ok := m.uploads[id]
	if !ok {
		return records.Upload{}, records.ErrNotFound
	}
	return u, nil
}

func (m *MemStore) DeleteJobs(ctx context.Context, before time.Time) ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var ids []string
	for id, j := range m.jobs {
		if j.Status.Terminal() && j.Finished.Before(before) {
			ids = append(ids, id)
			delete(m.jobs, id)
			delete(m.artifacts, id)
		}
	}
	slices.Sort(ids)
	return ids, nil
}

func (m *MemStore) DeleteUploads(ctx context.Context, before time.Time) ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var ids []string
	for id, u := range m.uploads {
		if !u.Created.Before(before) {
			continue
		}
		referenced := false
		for _, j := range m.jobs {
			if bytes.Contains(j.Request, []byte(id)) {
				referenced = true
				break
			}
		}
		for _, sel := range m.selections {
			if bytes.Contains(sel.Config, []byte(id)) {
				referenced = true
				break
			}
		}
		if !referenced {
			ids = append(ids, id)
			delete(m.uploads, id)
		}
	}
	slices.Sort(ids)
	return ids, nil
}

func (m *MemStore) CreateSelection(ctx context.Context, s records.Selection) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.selections[s.ID]; ok {
		return records.ErrConflict
	}
	s.Config = bytes.Clone(s.Config)
	s.Seq = 0
	s.Updated = s.Created
	m.selections[s.ID] = &s
	return nil
}

func (m *MemStore) GetSelection(ctx context.Context, id string) (records.Selection, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.selections[id]
	if !ok {
		return records.Selection{}, records.ErrNotFound
	}
	c := *s
	c.Config = bytes.Clone(s.Config)
	return c, nil
}

func (m *MemStore) ListSelections(ctx context.Context) ([]records.Selection, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]records.Selection, 0, len(m.selections))
	for _, s := range m.selections {
		c := *s
		c.Config = bytes.Clone(s.Config)
		out = append(out, c)
	}
	sort.Slice(out, func(a, b int) bool {
		if !out[a].Created.Equal(out[b].Created) {
			return out[a].Created.Before(out[b].Created)
		}
		return out[a].ID < out[b].ID
	})
	return out, nil
}

func (m *MemStore) AppendSelectionBatch(ctx context.Context, b records.SelectionBatch) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.selections[b.SelectionID]
	if !ok {
		return records.ErrNotFound
	}
	if b.Seq != s.Seq+1 {
		return records.ErrConflict
	}
	b.Data = bytes.Clone(b.Data)
	m.batches[b.SelectionID] = append(m.batches[b.SelectionID], b)
	s.Seq, s.Updated = b.Seq, b.Created
	return nil
}

func (m *MemStore) SelectionBatches(ctx context.Context, id string, after int64) ([]records.SelectionBatch, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.selections[id]; !ok {
		return nil, records.ErrNotFound
	}
	var out []records.SelectionBatch
	for _, b := range m.batches[id] {
		if b.Seq > after {
			b.Data = bytes.Clone(b.Data)
			out = append(out, b)
		}
	}
	return out, nil
}
