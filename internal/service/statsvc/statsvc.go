package statsvc

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"strconv"
	"testing/fstest"
	"time"

	"github.com/genlens/genlens/fault"
	"github.com/genlens/genlens/internal/store/records"
	"github.com/genlens/genlens/metric/frechet"
)

// Store keeps the parts of sharded statistics. PutStatsPart adds a part
// in one transaction: the first part of a name fixes its shard count and
// key; it reports duplicate (and changes nothing) for a shard held with
// the same bytes, returns records.ErrConflict for a shard held with other
// bytes and records.ErrMismatch for a part of another shard count or key.
// GetStatsSet returns records.ErrNotFound for an unknown name; StatsParts
// calls fn with the parts of a name in shard order. DeleteStats removes a
// name and its parts, or returns records.ErrNotFound.
type Store interface {
	PutStatsPart(ctx context.Context, p records.StatsPart) (duplicate bool, err error)
	GetStatsSet(ctx context.Context, name string) (records.StatsSet, error)
	StatsParts(ctx context.Context, name string, fn func(records.StatsPart) error) error
	DeleteStats(ctx context.Context, name string) error
}

// Service adds and merges parts over a Store.
type Service struct {
	store Store
	now   func() time.Time
}

// New returns a Service over st; now is the clock of the parts' times
// (nil: time.Now).
func New(st Store, now func() time.Time) *Service {
	if now == nil {
		now = time.Now
	}
	return &Service{store: st, now: now}
}

// namePattern is what a statistics name may hold: it appears in URLs and
// file names.
var namePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

// CheckName returns a *fault.FieldError of field "name" when name is not
// a valid statistics name.
func CheckName(name string) error {
	if !namePattern.MatchString(name) {
		return fault.Fieldf("name", "statistics name %q: want 1 to 128 letters, digits, '.', '_' or '-', starting with a letter or digit", name)
	}
	return nil
}

// Added is what Put reports of a part.
type Added struct {
	Part      *frechet.Part
	Duplicate bool // the shard was held with the same bytes
	Set       records.StatsSet
	Missing   []int // shards of the set without a part, ascending (never nil)
}

// Put reads the part file data (named file in errors), checks it whole
// (shapes, symmetry) before it is stored, since a broken part must not
// poison the merge of a name, and adds it under name. A part of another
// shard count or key is a *fault.InputError wrapping records.ErrMismatch.
func (s *Service) Put(ctx context.Context, name, file string, data []byte) (*Added, error) {
	if err := CheckName(name); err != nil {
		return nil, err
	}
	file = partFileName(file)
	p, err := frechet.ReadPart(memFile(file, data), file)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(data)
	dup, err := s.store.PutStatsPart(ctx, records.StatsPart{Name: name, Shard: p.Shard, Shards: p.Shards, Input: p.Key(),
		SHA256: hex.EncodeToString(sum[:]), N: p.N, Data: data, Created: s.now()})
	switch {
	case errors.Is(err, records.ErrMismatch):
		return nil, &fault.InputError{File: file, Msg: "not a part of statistics " + strconv.Quote(name) + ": " + err.Error(), Err: err}
	case err != nil:
		return nil, err
	}
	set, err := s.store.GetStatsSet(ctx, name)
	if err != nil {
		return nil, err
	}
	return &Added{Part: p, Duplicate: dup, Set: set, Missing: Missing(set)}, nil
}

// Merged is the merge of the parts held under a name.
type Merged struct {
	Set     records.StatsSet
	Missing []int                // never nil
	Acc     *frechet.Accumulator // nil without a part
	Prov    frechet.Provenance
	Dim     int
}

// Set returns what is held under name without merging it.
func (s *Service) Set(ctx context.Context, name string) (records.StatsSet, []int, error) {
	if err := CheckName(name); err != nil {
		return records.StatsSet{}, nil, err
	}
	set, err := s.store.GetStatsSet(ctx, name)
	if err != nil {
		return set, nil, err
	}
	if set.Shards < 1 || set.Shards > frechet.MaxShards {
		// Held from before parts were bounded: refuse it whole, before
		// listing its missing shards, and name the repair.
		return set, nil, &fault.InputError{Msg: fmt.Sprintf("statistics %q holds parts of %d shards, outside 1 to %d; DELETE it and post its parts again",
			name, set.Shards, frechet.MaxShards)}
	}
	return set, Missing(set), nil
}

// Delete removes the statistics held under name and all their parts.
func (s *Service) Delete(ctx context.Context, name string) error {
	if err := CheckName(name); err != nil {
		return err
	}
	return s.store.DeleteStats(ctx, name)
}

// Merge merges the parts held under name in shard order.
func (s *Service) Merge(ctx context.Context, name string) (*Merged, error) {
	set, missing, err := s.Set(ctx, name)
	if err != nil {
		return nil, err
	}
	m := &Merged{Set: set, Missing: missing}
	var tm frechet.TreeMerger
	err = s.store.StatsParts(ctx, name, func(sp records.StatsPart) error {
		file := fmt.Sprintf("part-%d.npz", sp.Shard)
		p, err := frechet.ReadPart(memFile(file, sp.Data), file)
		if err != nil {
			return fmt.Errorf("stored part %d of %q: %w", sp.Shard, name, err)
		}
		m.Prov, m.Dim = p.Prov, p.Dim()
		tm.Push(frechet.TakeAccumulator(p))
		return nil
	})
	if err != nil {
		return nil, err
	}
	m.Acc = tm.Result()
	return m, nil
}

// Missing lists the shard indices of set without a part.
func Missing(set records.StatsSet) []int {
	have := map[int]bool{}
	for _, h := range set.Have {
		have[h] = true
	}
	missing := []int{}
	for i := 0; i < set.Shards; i++ {
		if !have[i] {
			missing = append(missing, i)
		}
	}
	return missing
}

// memFile is a one-file file system over bytes, for the part readers.
func memFile(name string, b []byte) fs.FS {
	return fstest.MapFS{name: &fstest.MapFile{Data: b}}
}

// partFileName returns a name for a posted file in error messages.
func partFileName(fn string) string {
	b := path.Base(fn)
	if b == "." || b == "/" || !fs.ValidPath(b) || len(b) > 200 {
		return "part.npz"
	}
	return b
}
