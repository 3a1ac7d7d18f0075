package jobrun

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"sync"

	"gonum.org/v1/gonum/mat"

	"github.com/genlens/genlens/dataio"
	"github.com/genlens/genlens/fault"
	"github.com/genlens/genlens/internal/format/strictjson"
	"github.com/genlens/genlens/internal/store/records"
	"github.com/genlens/genlens/metric/frechet"
	"github.com/genlens/genlens/metric/online"
)

// SelectionConfig is the request that creates an online selection (POST
// /api/v1/selections) and the configuration stored with it: Protocol 1 of
// Hu, Leung and Farnia, "An Optimism-based Approach to Online Evaluation
// of Generative Models" (arXiv 2024), run by a client that asks which
// generator to sample next and posts what it drew.
type SelectionConfig struct {
	// Name labels the selection on the dashboard (optional).
	Name string `json:"name,omitempty"`
	// Score is fid (feature rows against a reference) or is (class
	// probability rows).
	Score string `json:"score"`
	// Algorithm is fid-ucb (Algorithm 1), naive-ucb or greedy for fid;
	// is-ucb (Algorithm 2), naive-ucb or greedy for is; "" is the
	// score's UCB algorithm.
	Algorithm string `json:"algorithm"`
	// Generators names the generators, at least 2, distinct.
	Generators []string `json:"generators"`
	// Ref is, for fid, the upload id of the reference: statistics (.npz
	// with mu and sigma) or feature rows (.npy, .npz with RefKey, .csv).
	Ref    string `json:"ref,omitempty"`
	RefKey string `json:"ref_key,omitempty"`
	// Sep separates the fields of a CSV reference (one character or
	// "tab"; "" is the comma).
	Sep string `json:"sep,omitempty"`
	// Classes is, for is, the number of classes K of every row.
	Classes int `json:"classes,omitempty"`
	// Delta is the failure probability δ of the bonuses, in (0, 1).
	Delta float64 `json:"delta"`
	// BonusScale multiplies the bonus, > 0 (1: the paper's constants).
	BonusScale float64 `json:"bonus_scale"`
	// FIDBonus is fid-ucb's bonus, as `genlens select --fid-bonus`:
	// auto (the default: fducb2025 up to online.AutoBonusMaxDim feature
	// dimensions, paper above), paper, code2024 or fducb2025
	// (online.ChooseBonusForm). Stored selections made before it existed
	// have none and ran the paper's bonus, which replaying them keeps.
	FIDBonus string `json:"fid_bonus,omitempty"`
}

// Bounds on a selection's sizes: the selector keeps per generator a
// vector of the class count (is) and per batch a row of it, so a count
// from a request must not size an allocation unchecked (a classes of
// 1e9 once reserved 49 GB). ImageNet-21k has 21,841 classes; a selection
// compares a handful of generators.
const (
	MaxSelectionClasses    = 1 << 17
	MaxSelectionGenerators = 1000
)

// NewSelectionConfig returns the defaults: fid with its UCB algorithm,
// the online package's δ and bonus scale, the auto bonus.
func NewSelectionConfig() SelectionConfig {
	return SelectionConfig{Score: "fid", Delta: online.DefaultDelta, BonusScale: online.DefaultBonusScale, FIDBonus: online.BonusAuto}
}

// Validate checks the configuration (not the reference file), sets an
// empty Algorithm to the score's UCB algorithm and clears is's FIDBonus.
func (c *SelectionConfig) Validate() error {
	if c.Algorithm == "" {
		c.Algorithm = map[string]string{"fid": online.FIDUCB.String(), "is": online.ISUCB.String()}[c.Score]
	}
	switch {
	case len(c.Name) > 200:
		return fault.Fieldf("name", "{name}: at most 200 bytes")
	case c.Score != "fid" && c.Score != "is":
		return fault.Fieldf("score", "{score} %q: want fid or is", c.Score)
	case len(c.Generators) < 2:
		return fault.Fieldf("generators", "{generators}: name at least 2 generators")
	case len(c.Generators) > MaxSelectionGenerators:
		return fault.Fieldf("generators", "{generators}: %d generators: at most %d", len(c.Generators), MaxSelectionGenerators)
	case c.Classes > MaxSelectionClasses:
		return fault.Fieldf("classes", "{classes} %d: at most %d", c.Classes, MaxSelectionClasses)
	case !(c.Delta > 0 && c.Delta < 1):
		return fault.Fieldf("delta", "{delta} %v: want a value in (0, 1)", c.Delta)
	case !(c.BonusScale > 0) || math.IsInf(c.BonusScale, 1):
		return fault.Fieldf("bonus_scale", "{bonus_scale} %v: want a positive number", c.BonusScale)
	}
	if _, err := dataio.ParseSep(c.Sep); err != nil {
		return fault.Fieldf("sep", "%v", err)
	}
	seen := map[string]bool{}
	for i, g := range c.Generators {
		if g == "" || len(g) > 200 {
			return fault.Fieldf("generators", "{generators}[%d]: want a name of 1 to 200 bytes", i)
		}
		if seen[g] {
			return fault.Fieldf("generators", "{generators} lists %q twice", g)
		}
		seen[g] = true
	}
	if c.Score == "fid" {
		if _, err := online.ParseFIDRule(c.Algorithm); err != nil {
			return fault.Fieldf("algorithm", "{algorithm} %q: want fid-ucb, naive-ucb or greedy for {score} fid", c.Algorithm)
		}
		if c.Ref == "" {
			return fault.Fieldf("ref", "{score} fid needs {ref}, the upload id of reference statistics or feature rows")
		}
		if c.Classes != 0 {
			return fault.Fieldf("classes", "{classes} is for {score} is")
		}
		if _, err := online.ChooseBonusForm(c.FIDBonus, 0); err != nil {
			return fault.Fieldf("fid_bonus", "{fid_bonus} %q: want %s", c.FIDBonus, online.BonusChoices)
		}
		return nil
	}
	if c.FIDBonus != online.BonusAuto && c.FIDBonus != "" {
		return fault.Fieldf("fid_bonus", "{fid_bonus} is for {score} fid")
	}
	c.FIDBonus = ""
	if _, err := online.ParseISRule(c.Algorithm); err != nil {
		return fault.Fieldf("algorithm", "{algorithm} %q: want is-ucb, naive-ucb or greedy for {score} is", c.Algorithm)
	}
	if c.Ref != "" || c.RefKey != "" || c.Sep != "" {
		return fault.Fieldf("ref", "{ref} is for {score} fid; IS needs no reference")
	}
	if c.Classes < 2 {
		return fault.Fieldf("classes", "{classes} %d: {score} is needs the number of classes, at least 2", c.Classes)
	}
	return nil
}

// selections is the Service's cache of selection states, each rebuilt
// from the Store's batch log and kept up to date with the batches other
// replicas append.
type selections struct {
	s     *Service
	mu    sync.Mutex
	cache map[string]*selState
}

func (x *selections) init(s *Service) { x.s = s; x.cache = map[string]*selState{} }

// selState is one selection's selector after the batches up to seq.
type selState struct {
	mu      sync.Mutex
	id      string
	cfg     SelectionConfig
	ref     *online.FIDReference // fid
	fidP    online.FIDParams
	isP     online.ISParams
	fid     *online.FIDSelector
	is      *online.ISSelector
	alg     online.Algorithm
	seq     int64
	batches []int // per generator
	samples []int
	skipped []int64 // batches the selector refused on replay (see apply)
	// stale marks a state a failed batch may have changed without the
	// log holding it: it is out of the cache, and a request that waited
	// for its lock looks the selection up again.
	stale bool

	// Estimates cost an eigenvalue problem of the reference's rank each
	// (FID), so they are kept until the generator's next batch.
	fidEst []online.FIDEstimate
	isEst  []online.ISEstimate
	fresh  []bool
}

// dim returns the number of columns a batch must have.
func (st *selState) dim() int {
	if st.fid != nil {
		return st.ref.Dim()
	}
	return st.cfg.Classes
}

// CreateSelection checks a configuration, prepares its reference (which
// must read and factorise) and stores the selection.
func (s *Service) CreateSelection(ctx context.Context, body []byte) (records.Selection, error) {
	cfg := NewSelectionConfig()
	if err := strictjson.Unmarshal(body, &cfg); err != nil {
		return records.Selection{}, err
	}
	if err := cfg.Validate(); err != nil {
		return records.Selection{}, err
	}
	if cfg.Ref != "" {
		if err := s.checkUpload(ctx, "ref", cfg.Ref); err != nil {
			return records.Selection{}, err
		}
	}
	raw, err := json.Marshal(cfg)
	if err != nil {
		return records.Selection{}, err
	}
	sel := records.Selection{ID: newID(), Config: raw, Created: s.now()}
	st, err := s.newSelState(sel)
	if err != nil {
		return records.Selection{}, err
	}
	if err := s.store.CreateSelection(ctx, sel); err != nil {
		return records.Selection{}, fmt.Errorf("storing the selection: %w", err)
	}
	s.sel.mu.Lock()
	s.sel.cache[sel.ID] = st
	s.sel.mu.Unlock()
	return s.store.GetSelection(ctx, sel.ID)
}

// newSelState builds the selector of a stored configuration, with no
// batches.
func (s *Service) newSelState(sel records.Selection) (*selState, error) {
	var cfg SelectionConfig
	if err := json.Unmarshal(sel.Config, &cfg); err != nil {
		return nil, fmt.Errorf("selection %s: stored configuration: %w", sel.ID, err)
	}
	g := len(cfg.Generators)
	st := &selState{id: sel.ID, cfg: cfg, batches: make([]int, g), samples: make([]int, g),
		fidEst: make([]online.FIDEstimate, g), isEst: make([]online.ISEstimate, g), fresh: make([]bool, g)}
	var err error
	if cfg.Score == "fid" {
		st.ref, err = readReference(s.fsys, cfg.Ref, cfg.RefKey, cfg.Sep)
		if err != nil {
			return nil, err
		}
		rule, _ := online.ParseFIDRule(cfg.Algorithm)
		st.fidP = online.DefaultFIDParams()
		st.fidP.Delta, st.fidP.BonusScale = cfg.Delta, cfg.BonusScale
		if rule == online.FIDUCB && cfg.FIDBonus != "" {
			// Only fid-ucb's index has the bonus; the other rules keep
			// the zero form, which computes no fducb2025 statistics.
			if st.fidP.Form, err = online.ChooseBonusForm(cfg.FIDBonus, st.ref.Dim()); err != nil {
				return nil, fmt.Errorf("selection %s: stored configuration: %w", sel.ID, err)
			}
		}
		if st.fid, err = online.NewFIDSelector(st.ref, len(cfg.Generators), rule, st.fidP); err != nil {
			return nil, err
		}
		st.alg = st.fid
		return st, nil
	}
	rule, _ := online.ParseISRule(cfg.Algorithm)
	st.isP = online.DefaultISParams()
	st.isP.Delta, st.isP.BonusScale = cfg.Delta, cfg.BonusScale
	if st.is, err = online.NewISSelector(cfg.Classes, len(cfg.Generators), rule, st.isP); err != nil {
		return nil, err
	}
	st.alg = st.is
	return st, nil
}

// readReference reads FID reference statistics or rows from the uploads,
// as `genlens select --ref` does.
func readReference(fsys fs.FS, path, key, sep string) (*online.FIDReference, error) {
	if key == "" && frechet.IsStatsFile(fsys, path) {
		st, err := frechet.ReadStatsFS(fsys, path)
		if err != nil {
			return nil, err
		}
		ref, err := online.NewFIDReference(st)
		if err != nil {
			return nil, &fault.InputError{File: path, Msg: err.Error(), Err: err}
		}
		return ref, nil
	}
	r, _ := dataio.ParseSep(sep) // checked by Validate
	x, err := dataio.ReadMatrixFS(fsys, path, dataio.ReadOptions{Key: key, Sep: r})
	if err != nil {
		return nil, err
	}
	ref, err := online.FIDReferenceFromRows(x)
	if err != nil {
		return nil, &fault.InputError{File: path, Key: key, Msg: err.Error(), Err: err}
	}
	return ref, nil
}

// state returns the selection's state, synchronised with the Store, with
// its lock held; the caller unlocks it.
func (s *Service) state(ctx context.Context, id string) (*selState, error) {
	s.sel.mu.Lock()
	st := s.sel.cache[id]
	s.sel.mu.Unlock()
	if st == nil {
		sel, err := s.store.GetSelection(ctx, id)
		if err != nil {
			return nil, err
		}
		if st, err = s.newSelState(sel); err != nil {
			return nil, err
		}
		s.sel.mu.Lock()
		if c := s.sel.cache[id]; c != nil {
			st = c // another request built it first
		} else {
			s.sel.cache[id] = st
		}
		s.sel.mu.Unlock()
	}
	st.mu.Lock()
	if st.stale {
		st.mu.Unlock()
		return s.state(ctx, id)
	}
	if err := s.syncState(ctx, st); err != nil {
		st.mu.Unlock()
		return nil, err
	}
	return st, nil
}

// syncState applies the batches appended since st.seq (by this or
// another replica), in order.
func (s *Service) syncState(ctx context.Context, st *selState) error {
	sel, err := s.store.GetSelection(ctx, st.id)
	if err != nil {
		return err
	}
	if sel.Seq == st.seq {
		return nil
	}
	bs, err := s.store.SelectionBatches(ctx, st.id, st.seq)
	if err != nil {
		return err
	}
	for _, b := range bs {
		if b.Seq != st.seq+1 {
			return fmt.Errorf("selection %s: batch %d follows %d in the store", st.id, b.Seq, st.seq)
		}
		m, err := decodeBatch(b)
		if err != nil {
			return fmt.Errorf("selection %s: batch %d: %w", st.id, b.Seq, err)
		}
		st.apply(b.Generator, m, b.Seq)
	}
	return nil
}

// apply updates the selector with a stored batch. Batches are checked
// before they are stored, so the selector refuses one only on a
// numerical failure; it then changes nothing, the same on every replica
// that replays the log, and the batch is recorded as skipped.
func (st *selState) apply(g int, m *mat.Dense, seq int64) error {
	st.seq = seq
	if g < 0 || g >= len(st.batches) {
		st.skipped = append(st.skipped, seq)
		return fmt.Errorf("generator %d out of range", g)
	}
	if err := st.update(g, m); err != nil {
		st.skipped = append(st.skipped, seq)
		return err
	}
	st.count(g, m)
	return nil
}

// update gives the selector a batch of generator g, a panic of the
// numerics (a LAPACK routine on values it cannot scale) returned as an
// error.
func (st *selState) update(g int, m *mat.Dense) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("the selector failed on the batch: %v", v)
		}
	}()
	return st.alg.Update(g, m)
}

// count records a batch of generator g the selector took.
func (st *selState) count(g int, m *mat.Dense) {
	r, _ := m.Dims()
	st.batches[g]++
	st.samples[g] += r
	st.fresh[g] = false
}

// forget drops a state from the cache and marks it stale, after a batch
// that failed may have changed its selector: the next request rebuilds
// it from the log.
func (x *selections) forget(st *selState) {
	st.stale = true
	x.mu.Lock()
	if x.cache[st.id] == st {
		delete(x.cache, st.id)
	}
	x.mu.Unlock()
}

// estimate brings generator g's cached estimate up to date.
func (st *selState) estimate(g int) error {
	if st.fresh[g] {
		return nil
	}
	var err error
	if st.fid != nil {
		st.fidEst[g], err = st.fid.Estimate(g)
	} else {
		st.isEst[g], err = st.is.Estimate(g)
	}
	st.fresh[g] = err == nil
	return err
}

func encodeBatch(m *mat.Dense) []byte {
	r, c := m.Dims()
	b := make([]byte, 0, 8*r*c)
	for i := range r {
		for j := range c {
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(m.At(i, j)))
		}
	}
	return b
}

func decodeBatch(b records.SelectionBatch) (*mat.Dense, error) {
	if b.Rows < 1 || b.Cols < 1 || len(b.Data) != 8*b.Rows*b.Cols {
		return nil, fmt.Errorf("%d bytes for %d x %d values", len(b.Data), b.Rows, b.Cols)
	}
	v := make([]float64, b.Rows*b.Cols)
	for i := range v {
		v[i] = math.Float64frombits(binary.LittleEndian.Uint64(b.Data[8*i:]))
	}
	return mat.NewDense(b.Rows, b.Cols, v), nil
}

// SamplesRequest is the body of POST /api/v1/selections/{id}/samples: the
// rows just drawn from one generator (feature rows for fid,
// class-probability rows for is).
type SamplesRequest struct {
	Generator string      `json:"generator"`
	Features  [][]float64 `json:"features"`
}

// SamplesResult answers a posted batch.
type SamplesResult struct {
	Step      int64  `json:"step"`      // the batch's number in the selection's log, from 1
	Generator string `json:"generator"` // whose estimate changed
	Samples   int    `json:"samples"`   // that generator's samples so far
	Next      string `json:"next"`      // the generator to sample now
}

// AddSamples checks a batch, appends it to the selection's log (retrying
// when another replica appended first) and updates the estimate.
func (s *Service) AddSamples(ctx context.Context, id string, body []byte) (*SamplesResult, error) {
	var req SamplesRequest
	if err := strictjson.Unmarshal(body, &req); err != nil {
		return nil, err
	}
	for attempt := 0; ; attempt++ {
		st, err := s.state(ctx, id)
		if err != nil {
			return nil, err
		}
		res, err := s.addLocked(ctx, st, req)
		st.mu.Unlock()
		if errors.Is(err, records.ErrConflict) && attempt < 20 {
			continue // another replica appended: catch up and retry
		}
		return res, err
	}
}

func (s *Service) addLocked(ctx context.Context, st *selState, req SamplesRequest) (*SamplesResult, error) {
	g := -1
	for i, name := range st.cfg.Generators {
		if name == req.Generator {
			g = i
		}
	}
	if g < 0 {
		return nil, fault.Fieldf("generator", "{generator} %q is not one of this selection's generators", req.Generator)
	}
	m, err := checkBatch(req.Features, st.dim(), st.cfg.Score == "is")
	if err != nil {
		return nil, err
	}
	// The selector takes the batch before the log does: a batch it fails
	// on (an internal error) is never a step. Should either fail, the
	// selector may hold part of the batch, so the state is rebuilt from
	// the log by the next request.
	if err := st.update(g, m); err != nil {
		s.sel.forget(st)
		return nil, fmt.Errorf("selection %s: updating %s: %w", st.id, req.Generator, err)
	}
	b := records.SelectionBatch{SelectionID: st.id, Seq: st.seq + 1, Generator: g, Data: encodeBatch(m), Created: s.now()}
	b.Rows, b.Cols = m.Dims()
	if err := s.store.AppendSelectionBatch(ctx, b); err != nil {
		s.sel.forget(st)
		return nil, err
	}
	st.seq = b.Seq
	st.count(g, m)
	return &SamplesResult{Step: b.Seq, Generator: req.Generator, Samples: st.samples[g], Next: st.cfg.Generators[st.alg.Pick()]}, nil
}

// maxFeature bounds the magnitude of a posted value: sums of squares of
// larger ones overflow float64 (1e300 made the eigensolver panic).
const maxFeature = 1e150

// checkBatch checks posted rows as the selector would, so that nothing it
// would refuse reaches the log: at least one row, d columns each, finite
// values, and for IS rows that are class distributions.
func checkBatch(rows [][]float64, d int, probs bool) (*mat.Dense, error) {
	if len(rows) == 0 {
		return nil, fault.Fieldf("features", "{features}: want at least one row")
	}
	v := make([]float64, 0, len(rows)*d)
	for i, r := range rows {
		if len(r) != d {
			return nil, fault.Fieldf("features", "{features}[%d]: %d values, want %d", i, len(r), d)
		}
		for j, x := range r {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return nil, fault.Fieldf("features", "{features}[%d][%d]: %v is not finite", i, j, x)
			}
			if math.Abs(x) > maxFeature {
				return nil, fault.Fieldf("features", "{features}[%d][%d]: %g: at most %g in magnitude (the covariance squares it)", i, j, x, maxFeature)
			}
		}
		v = append(v, r...)
	}
	m := mat.NewDense(len(rows), d, v)
	if probs {
		if err := frechet.CheckProbs(m, frechet.ProbTolerance); err != nil {
			return nil, fault.Fieldf("features", "{features}: %v", err)
		}
	}
	return m, nil
}

// NextPick is the answer of GET /api/v1/selections/{id}/next.
type NextPick struct {
	Generator string `json:"generator"`
	Index     int    `json:"index"` // in the selection's generators
	Step      int64  `json:"step"`  // the number the batch will have
}

// Next returns the generator to sample now: each one once, in order,
// then the one with the best optimistic index.
func (s *Service) Next(ctx context.Context, id string) (*NextPick, error) {
	st, err := s.state(ctx, id)
	if err != nil {
		return nil, err
	}
	defer st.mu.Unlock()
	g := st.alg.Pick()
	return &NextPick{Generator: st.cfg.Generators[g], Index: g, Step: st.seq + 1}, nil
}

// SelectionStatus is the answer of GET /api/v1/selections/{id}.
type SelectionStatus struct {
	ID         string            `json:"id"`
	Name       string            `json:"name,omitempty"`
	Score      string            `json:"score"`
	Algorithm  string            `json:"algorithm"`
	FIDBonus   string            `json:"fid_bonus,omitempty"` // the form fid-ucb runs (not auto); absent for other algorithms
	Steps      int64             `json:"steps"`               // batches posted
	Next       string            `json:"next"`
	Generators []GeneratorStatus `json:"generators"`
	Skipped    []int64           `json:"skipped,omitempty"` // steps the selector could not use
	Created    string            `json:"created"`
	Updated    string            `json:"updated"`
}

// GeneratorStatus is one generator's standing. Index is what the
// algorithm ranks by (the optimistic FID, lowest first, or optimistic IS,
// highest first; the empirical value for greedy); Estimate is the
// empirical FID or IS; Bonus is how far optimism moves the index from the
// estimate (FID minus index, or index minus IS). All three are null
// before the generator's first batch.
type GeneratorStatus struct {
	Name     string   `json:"name"`
	Batches  int      `json:"batches"` // the picks it received
	Samples  int      `json:"samples"`
	Index    *float64 `json:"index"`
	Estimate *float64 `json:"estimate"`
	Bonus    *float64 `json:"bonus"`
}

func finite(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

// SelectionStatus returns a selection's current scores, bonuses and
// picks.
func (s *Service) SelectionStatus(ctx context.Context, id string) (*SelectionStatus, error) {
	st, err := s.state(ctx, id)
	if err != nil {
		return nil, err
	}
	defer st.mu.Unlock()
	sel, err := s.store.GetSelection(ctx, id)
	if err != nil {
		return nil, err
	}
	out := &SelectionStatus{ID: id, Name: st.cfg.Name, Score: st.cfg.Score, Algorithm: st.cfg.Algorithm, Steps: st.seq,
		Next: st.cfg.Generators[st.alg.Pick()], Skipped: st.skipped,
		Created: sel.Created.UTC().Format("2006-01-02T15:04:05.000Z07:00"), Updated: sel.Updated.UTC().Format("2006-01-02T15:04:05.000Z07:00")}
	if st.fid != nil && st.cfg.Algorithm == online.FIDUCB.String() {
		out.FIDBonus = st.fidP.Form.String()
	}
	scores := st.alg.Scores()
	for g, name := range st.cfg.Generators {
		gs := GeneratorStatus{Name: name, Batches: st.batches[g], Samples: st.samples[g]}
		if st.samples[g] > 0 {
			gs.Index = finite(scores[g])
			if err := st.estimate(g); err != nil {
				return nil, err
			}
			if st.fid != nil {
				e := st.fidEst[g]
				gs.Estimate = finite(e.FID)
				gs.Bonus = finite(e.FID - scores[g])
			} else {
				is := online.EmpiricalIS(st.isEst[g])
				gs.Estimate = finite(is)
				gs.Bonus = finite(scores[g] - is)
			}
		}
		out.Generators = append(out.Generators, gs)
	}
	return out, nil
}

// Selections lists every selection's status, oldest first, for the
// dashboard and the metrics. A selection that cannot be loaded (its
// reference file missing from this replica's data directory) is left
// out and reported in the error, which joins every such failure; the
// others are returned all the same.
func (s *Service) Selections(ctx context.Context) ([]*SelectionStatus, error) {
	all, err := s.store.ListSelections(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]*SelectionStatus, 0, len(all))
	var errs []error
	for _, sel := range all {
		st, err := s.SelectionStatus(ctx, sel.ID)
		if err != nil {
			if ctx.Err() != nil {
				return out, ctx.Err()
			}
			errs = append(errs, fmt.Errorf("selection %s: %w", sel.ID, err))
			continue
		}
		out = append(out, st)
	}
	return out, errors.Join(errs...)
}
