package jobrun

import (
	"bytes"
	"context"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
)

// MemStore is a Store in memory: for tests, and for a single process
// that needs no durability. The zero value is not usable; call
// NewMemStore.
type MemStore struct {
	mu         sync.Mutex
	jobs       map[string]*Job
	artifacts  map[string]map[string]Artifact
	uploads    map[string]Upload
	selections map[string]*Selection
	batches    map[string][]SelectionBatch
}

var _ Store = (*MemStore)(nil)

// NewMemStore returns an empty MemStore.
func NewMemStore() *MemStore {
	return &MemStore{
		jobs:       map[string]*Job{},
		artifacts:  map[string]map[string]Artifact{},
		uploads:    map[string]Upload{},
		selections: map[string]*Selection{},
		batches:    map[string][]SelectionBatch{},
	}
}

// cloneJob returns a deep copy, so that callers never share slices with
// the store (a SQL store hands out fresh copies too).
func cloneJob(j Job) Job {
	j.Request = bytes.Clone(j.Request)
	j.Result = bytes.Clone(j.Result)
	return j
}

func (m *MemStore) CreateJob(ctx context.Context, j Job) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.jobs[j.ID]; ok {
		return ErrConflict
	}
	c := cloneJob(j)
	m.jobs[j.ID] = &c
	return nil
}

func (m *MemStore) GetJob(ctx context.Context, id string) (Job, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	j, ok := m.jobs[id]
	if !ok {
		return Job{}, ErrNotFound
	}
	return cloneJob(*j), nil
}

func (m *MemStore) ListJobs(ctx context.Context, limit int) ([]Job, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]Job, 0, len(m.jobs))
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

func (m *MemStore) CountJobs(ctx context.Context, s Status) (int, error) {
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

func (m *MemStore) ClaimJob(ctx context.Context, worker string, now time.Time) (Job, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var best *Job
	for _, j := range m.jobs {
		if j.Status != StatusQueued {
			continue
		}
		if best == nil || j.Created.Before(best.Created) || (j.Created.Equal(best.Created) && j.ID < best.ID) {
			best = j
		}
	}
	if best == nil {
		return Job{}, false, nil
	}
	best.Status = StatusRunning
	best.ClaimedBy = worker
	best.Started = now
	best.Heartbeat = now
	return cloneJob(*best), true, nil
}

// running returns the job id if it runs under worker.
func (m *MemStore) running(id, worker string) (*Job, error) {
	j, ok := m.jobs[id]
	if !ok {
		return nil, ErrNotFound
	}
	if j.Status != StatusRunning || j.ClaimedBy != worker {
		return nil, ErrNotClaimed
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

func (m *MemStore) FinishJob(ctx context.Context, id, worker string, o Outcome, now time.Time) error {
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

func (m *MemStore) CancelJob(ctx context.Context, id, msg string, now time.Time) (Job, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	j, ok := m.jobs[id]
	if !ok {
		return Job{}, ErrNotFound
	}
	switch j.Status {
	case StatusQueued:
		j.Status, j.ErrorKind, j.Error, j.Finished = StatusCanceled, "canceled", msg, now
	case StatusRunning:
		j.CancelRequested = true
	}
	return cloneJob(*j), nil
}

func (m *MemStore) FailStale(ctx context.Context, before time.Time, msg string, now time.Time) ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var ids []string
	for _, j := range m.jobs {
		if j.Status == StatusRunning && j.Heartbeat.Before(before) {
			j.Status, j.ErrorKind, j.Error, j.Finished = StatusFailed, "internal", msg, now
			ids = append(ids, j.ID)
		}
	}
	slices.Sort(ids)
	return ids, nil
}

func (m *MemStore) PutArtifact(ctx context.Context, a Artifact) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.artifacts[a.JobID] == nil {
		m.artifacts[a.JobID] = map[string]Artifact{}
	}
	a.Data = bytes.Clone(a.Data)
	m.artifacts[a.JobID][a.Name] = a
	return nil
}

func (m *MemStore) GetArtifact(ctx context.Context, jobID, name string) (Artifact, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	a, ok := m.artifacts[jobID][name]
	if !ok {
		return Artifact{}, ErrNotFound
	}
	a.Data = bytes.Clone(a.Data)
	return a, nil
}

func (m *MemStore) ListArtifacts(ctx context.Context, jobID string) ([]ArtifactInfo, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := []ArtifactInfo{}
	for _, a := range m.artifacts[jobID] {
		out = append(out, ArtifactInfo{Name: a.Name, ContentType: a.ContentType, Size: int64(len(a.Data))})
	}
	slices.SortFunc(out, func(a, b ArtifactInfo) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

func (m *MemStore) PutUpload(ctx context.Context, u Upload) error {
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

func (m *MemStore) GetUpload(ctx context.Context, id string) (Upload, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	u, ok := m.uploads[id]
	if !ok {
		return Upload{}, ErrNotFound
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

func (m *MemStore) CreateSelection(ctx context.Context, s Selection) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.selections[s.ID]; ok {
		return ErrConflict
	}
	s.Config = bytes.Clone(s.Config)
	s.Seq = 0
	s.Updated = s.Created
	m.selections[s.ID] = &s
	return nil
}

func (m *MemStore) GetSelection(ctx context.Context, id string) (Selection, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.selections[id]
	if !ok {
		return Selection{}, ErrNotFound
	}
	c := *s
	c.Config = bytes.Clone(s.Config)
	return c, nil
}

func (m *MemStore) ListSelections(ctx context.Context) ([]Selection, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]Selection, 0, len(m.selections))
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

func (m *MemStore) AppendSelectionBatch(ctx context.Context, b SelectionBatch) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.selections[b.SelectionID]
	if !ok {
		return ErrNotFound
	}
	if b.Seq != s.Seq+1 {
		return ErrConflict
	}
	b.Data = bytes.Clone(b.Data)
	m.batches[b.SelectionID] = append(m.batches[b.SelectionID], b)
	s.Seq, s.Updated = b.Seq, b.Created
	return nil
}

func (m *MemStore) SelectionBatches(ctx context.Context, id string, after int64) ([]SelectionBatch, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.selections[id]; !ok {
		return nil, ErrNotFound
	}
	var out []SelectionBatch
	for _, b := range m.batches[id] {
		if b.Seq > after {
			b.Data = bytes.Clone(b.Data)
			out = append(out, b)
		}
	}
	return out, nil
}
