package statsvc

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/genlens/genlens/internal/store/records"
)

// MemStore is a Store in memory, for tests and a single process without
// a database. It is safe for concurrent use.
type MemStore struct {
	mu   sync.Mutex
	sets map[string]*memSet
}

type memSet struct {
	shards int
	input  string
	parts  map[int]records.StatsPart
}

// PutStatsPart implements Store.
func (m *MemStore) PutStatsPart(ctx context.Context, p records.StatsPart) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.sets == nil {
		m.sets = map[string]*memSet{}
	}
	s := m.sets[p.Name]
	if s == nil {
		s = &memSet{shards: p.Shards, input: p.Input, parts: map[int]records.StatsPart{}}
		m.sets[p.Name] = s
	}
	switch {
	case s.shards != p.Shards:
		return false, fmt.Errorf("%w: %q holds parts of %d shards, this part is of %d", records.ErrMismatch, p.Name, s.shards, p.Shards)
	case s.input != p.Input:
		return false, fmt.Errorf("%w: %q holds parts of another input (%s), this part is of %s", records.ErrMismatch, p.Name, s.input, p.Input)
	}
	if held, ok := s.parts[p.Shard]; ok {
		if held.SHA256 == p.SHA256 {
			return true, nil
		}
		return false, fmt.Errorf("%w: %q holds another part for shard %d (sha256 %.12s, this one %.12s)", records.ErrConflict, p.Name, p.Shard, held.SHA256, p.SHA256)
	}
	p.Data = slices.Clone(p.Data)
	s.parts[p.Shard] = p
	return false, nil
}

// GetStatsSet implements Store.
func (m *MemStore) GetStatsSet(ctx context.Context, name string) (records.StatsSet, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	set := records.StatsSet{Name: name}
	s := m.sets[name]
	if s == nil {
		return set, fmt.Errorf("%w: no statistics %q", records.ErrNotFound, name)
	}
	set.Shards, set.Input = s.shards, s.input
	for shard, p := range s.parts {
		set.Have = append(set.Have, shard)
		set.N += p.N
	}
	slices.Sort(set.Have)
	return set, nil
}

// StatsParts implements Store.
func (m *MemStore) StatsParts(ctx context.Context, name string, fn func(records.StatsPart) error) error {
	m.mu.Lock()
	var parts []records.StatsPart
	if s := m.sets[name]; s != nil {
		for _, p := range s.parts {
			parts = append(parts, p)
		}
	}
	m.mu.Unlock()
	slices.SortFunc(parts, func(a, b records.StatsPart) int { return a.Shard - b.Shard })
	for _, p := range parts {
		if err := fn(p); err != nil {
			return err
		}
	}
	return nil
}

// DeleteStats implements Store.
func (m *MemStore) DeleteStats(ctx context.Context, name string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.sets[name] == nil {
		return fmt.Errorf("%w: no statistics %q", records.ErrNotFound, name)
	}
	delete(m.sets, name)
	return nil
}
