package jobrun

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/genlens/genlens/fault"
	"github.com/genlens/genlens/internal/store/records"
	"github.com/genlens/genlens/metric/online"
)

// drawer draws batches of rows from synthetic generators: generator g's
// rows are shift[g] + scale[g]·N(0, I_d).
type drawer struct {
	r            *rand.Rand
	d            int
	shift, scale []float64
}

func (dr drawer) batch(g, n int) [][]float64 {
	rows := make([][]float64, n)
	for i := range rows {
		rows[i] = normal(dr.r, 1, dr.d, dr.shift[g], dr.scale[g])
	}
	return rows
}

func post(t *testing.T, s *Service, id, gen string, rows [][]float64) *SamplesResult {
	t.Helper()
	b, _ := json.Marshal(SamplesRequest{Generator: gen, Features: rows})
	res, err := s.AddSamples(context.Background(), id, b)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// fidSelection uploads a reference of 400 rows of N(0, I_4) and creates
// an FID selection over three generators.
func fidSelection(t *testing.T, s *Service, algorithm string, bonusScale float64, fidBonus ...string) string {
	t.Helper()
	r := rand.New(rand.NewPCG(21, 22))
	ref := upload(t, s, "ref.npy", npy(t, []int{400, 4}, normal(r, 400, 4, 0, 1)))
	cfg := map[string]any{"score": "fid", "algorithm": algorithm, "generators": []string{"shifted", "good", "wide"}, "ref": ref, "bonus_scale": bonusScale}
	for _, b := range fidBonus {
		cfg["fid_bonus"] = b
	}
	b, _ := json.Marshal(cfg)
	sel, err := s.CreateSelection(context.Background(), b)
	if err != nil {
		t.Fatal(err)
	}
	return sel.ID
}

// With three well-separated generators (a mean shifted by 2, the
// reference distribution, a spread three times the reference's: FIDs
// 16, 0 and 16) the service, with the paper's bonus (finite after one
// batch; fducb2025's stays infinite until the thresholding keeps some
// of a generator's covariance, so it may repeat one first),
// first visits each once, in order, then settles on the one that matches
// the reference.
func TestSelectionConvergesFID(t *testing.T) {
	s := newTestService(t, nil, Config{})
	ctx := context.Background()
	id := fidSelection(t, s, "fid-ucb", 0.05, "paper")
	dr := drawer{r: rand.New(rand.NewPCG(1, 2)), d: 4, shift: []float64{2, 0, 0}, scale: []float64{1, 1, 3}}
	var picks []string
	for step := 1; step <= 120; step++ {
		next, err := s.Next(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if next.Step != int64(step) {
			t.Fatalf("step %d: next says step %d", step, next.Step)
		}
		picks = append(picks, next.Generator)
		post(t, s, id, next.Generator, dr.batch(next.Index, 10))
	}
	if !reflect.DeepEqual(picks[:3], []string{"shifted", "good", "wide"}) {
		t.Errorf("first picks %v, want each generator once in order", picks[:3])
	}
	good := 0
	for _, p := range picks[60:] {
		if p == "good" {
			good++
		}
	}
	if good < 55 {
		t.Errorf("good picked %d of the last 60 steps, want at least 55; picks %v", good, picks)
	}
	st, err := s.SelectionStatus(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if st.Next != "good" || st.Steps != 120 {
		t.Errorf("status: next %s, steps %d", st.Next, st.Steps)
	}
	g := st.Generators
	if *g[1].Estimate >= *g[0].Estimate || *g[1].Estimate >= *g[2].Estimate || g[1].Batches <= g[0].Batches+g[2].Batches {
		t.Errorf("status %+v", g)
	}
	for _, gs := range g {
		if gs.Samples != 10*gs.Batches || *gs.Bonus <= 0 || math.Abs(*gs.Estimate-*gs.Bonus-*gs.Index) > 1e-9*math.Abs(*gs.Estimate) {
			t.Errorf("%s: samples %d, batches %d, estimate %v, bonus %v, index %v", gs.Name, gs.Samples, gs.Batches, *gs.Estimate, *gs.Bonus, *gs.Index)
		}
	}
}

func TestSelectionConvergesIS(t *testing.T) {
	s := newTestService(t, nil, Config{})
	ctx := context.Background()
	sel, err := s.CreateSelection(ctx, []byte(`{"score":"is","algorithm":"is-ucb","generators":["blurry","sharp"],"classes":5,"bonus_scale":0.05}`))
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(3, 4))
	// Sharp rows put 0.96 on one class, spread over all classes: IS near
	// 5. Blurry rows are nearly uniform: IS near 1.
	rows := func(conf float64, n int) [][]float64 {
		out := make([][]float64, n)
		for i := range out {
			p := make([]float64, 5)
			for j := range p {
				p[j] = (1 - conf) / 4
			}
			p[r.IntN(5)] = conf
			out[i] = p
		}
		return out
	}
	conf := map[string]float64{"blurry": 0.25, "sharp": 0.96}
	for range 60 {
		next, err := s.Next(ctx, sel.ID)
		if err != nil {
			t.Fatal(err)
		}
		post(t, s, sel.ID, next.Generator, rows(conf[next.Generator], 8))
	}
	st, _ := s.SelectionStatus(ctx, sel.ID)
	if st.Next != "sharp" || st.Generators[1].Batches < 50 || *st.Generators[1].Estimate < 3 || *st.Generators[0].Estimate > 1.2 {
		t.Errorf("status %+v %+v %+v", st, st.Generators[0], st.Generators[1])
	}
}

// The state lives in the Store: a second Service on the same store (a
// restart, or another replica) continues exactly, and batches posted
// alternately through two replicas give bit for bit the scores of one
// online.FIDSelector fed the same batches.
func TestSelectionStateSurvivesTheStore(t *testing.T) {
	store := NewMemStore()
	dir := t.TempDir()
	a := newTestService(t, store, Config{DataDir: dir, Replica: "a"})
	ctx := context.Background()
	id := fidSelection(t, a, "fid-ucb", 1)
	dr := drawer{r: rand.New(rand.NewPCG(5, 6)), d: 4, shift: []float64{2, 0, 0}, scale: []float64{1, 1, 2}}

	// The reference selector, fed directly.
	var cfg SelectionConfig
	sel, _ := store.GetSelection(ctx, id)
	json.Unmarshal(sel.Config, &cfg)
	ref, err := readReference(a.fsys, cfg.Ref, "", "")
	if err != nil {
		t.Fatal(err)
	}
	p := online.DefaultFIDParams()
	p.Form = online.BonusFDUCB2025 // auto's, the default, at d = 4
	want, err := online.NewFIDSelector(ref, 3, online.FIDUCB, p)
	if err != nil {
		t.Fatal(err)
	}

	b := newTestService(t, store, Config{DataDir: dir, Replica: "b"})
	replicas := []*Service{a, b}
	for step := range 30 {
		s := replicas[step%2]
		next, err := s.Next(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if g := want.Pick(); g != next.Index {
			t.Fatalf("step %d: replica picks %d, the direct selector %d", step, next.Index, g)
		}
		rows := dr.batch(next.Index, 7)
		post(t, s, id, next.Generator, rows)
		m := mat.NewDense(len(rows), 4, nil)
		for i, r := range rows {
			m.SetRow(i, r)
		}
		if err := want.Update(next.Index, m); err != nil {
			t.Fatal(err)
		}
	}
	// A fresh process (empty cache) rebuilds the same state from the log.
	c := newTestService(t, store, Config{DataDir: dir, Replica: "c"})
	for _, s := range []*Service{a, b, c} {
		st, err := s.SelectionStatus(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		scores := want.Scores()
		for g, gs := range st.Generators {
			if gs.Index == nil || *gs.Index != scores[g] {
				t.Errorf("replica %s: generator %d index %v, direct %v", s.cfg.Replica, g, gs.Index, scores[g])
			}
		}
		if st.Steps != 30 {
			t.Errorf("replica %s: %d steps", s.cfg.Replica, st.Steps)
		}
	}
	all, err := c.Selections(ctx)
	if err != nil || len(all) != 1 || all[0].ID != id {
		t.Errorf("Selections = %v, %v", all, err)
	}
}

func TestSelectionErrors(t *testing.T) {
	s := newTestService(t, nil, Config{})
	ctx := context.Background()
	ref := upload(t, s, "ref.npy", npy(t, []int{5, 2}, []float64{1, 2, 3, 1, 2, 2, 0, 1, 4, 3}))
	for _, c := range []struct{ body, field string }{
		{`{"generators":["a","b"],"ref":"` + ref + `","algo":"x"}`, "algo"},
		{`{"generators":["a"],"ref":"` + ref + `"}`, "generators"},
		{`{"generators":["a","a"],"ref":"` + ref + `"}`, "generators"},
		{`{"generators":["a","b"]}`, "ref"},
		{`{"generators":["a","b"],"ref":"../` + ref + `"}`, "ref"},
		{`{"generators":["a","b"],"ref":"` + ref + `","algorithm":"is-ucb"}`, "algorithm"},
		{`{"score":"is","generators":["a","b"]}`, "classes"},
		{`{"score":"is","generators":["a","b"],"classes":3,"ref":"` + ref + `"}`, "ref"},
		{`{"score":"kid","generators":["a","b"]}`, "score"},
		{`{"generators":["a","b"],"ref":"` + ref + `","delta":1}`, "delta"},
		{`{"generators":["a","b"],"ref":"` + ref + `","bonus_scale":0}`, "bonus_scale"},
		// Sizes from a number: 1e10 classes killed the server at once.
		{`{"score":"is","generators":["a","b"],"classes":10000000000}`, "classes"},
		{`{"score":"is","generators":["a","b"],"classes":1000000000}`, "classes"},
		{`{"score":"is","generators":` + manyNames(MaxSelectionGenerators+1) + `,"classes":3}`, "generators"},
	} {
		_, err := s.CreateSelection(ctx, []byte(c.body))
		var fe *fault.FieldError
		if !errors.As(err, &fe) || fe.Field != c.field {
			t.Errorf("%s: %v, want a field error naming %s", c.body, err, c.field)
		}
	}
	sel, err := s.CreateSelection(ctx, []byte(`{"generators":["a","b"],"ref":"`+ref+`"}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ body, field string }{
		{`{"generator":"c","features":[[1,2]]}`, "generator"},
		{`{"generator":"a","features":[]}`, "features"},
		{`{"generator":"a","features":[[1,2,3]]}`, "features"},
		{`{"generator":"a","features":[[1,2],[3]]}`, "features"},
		{`{"generator":"a","features":[[1,"x"]]}`, "features"},
		{`{"generator":"a","features":[[1,2]],"extra":1}`, "extra"},
	} {
		_, err := s.AddSamples(ctx, sel.ID, []byte(c.body))
		var fe *fault.FieldError
		if !errors.As(err, &fe) || fe.Field != c.field {
			t.Errorf("%s: %v, want a field error naming %s", c.body, err, c.field)
		}
	}
	if st, _ := s.SelectionStatus(ctx, sel.ID); st.Steps != 0 || st.Generators[0].Index != nil {
		t.Errorf("refused batches changed the state: %+v", st)
	}
	if _, err := s.Next(ctx, "nope"); !errors.Is(err, records.ErrNotFound) {
		t.Errorf("Next(missing): %v", err)
	}
	// IS rows must be distributions.
	is, _ := s.CreateSelection(ctx, []byte(`{"score":"is","algorithm":"greedy","generators":["a","b"],"classes":2}`))
	if _, err := s.AddSamples(ctx, is.ID, []byte(`{"generator":"a","features":[[0.5,0.6]]}`)); err == nil {
		t.Error("IS row summing to 1.1 accepted")
	}
}

// A selection whose reference cannot be read on this replica is left out
// of the list, with an error naming it; the others are listed.
func TestSelectionsListSkipsBroken(t *testing.T) {
	s := newTestService(t, nil, Config{})
	ctx := context.Background()
	good := fidSelection(t, s, "greedy", 1)
	// A second replica whose data directory lacks the reference.
	other := newTestService(t, s.store, Config{})
	if _, err := other.CreateSelection(ctx, []byte(`{"score":"is","generators":["a","b"],"classes":2}`)); err != nil {
		t.Fatal(err)
	}
	list, err := other.Selections(ctx)
	if err == nil || !strings.Contains(err.Error(), good) || len(list) != 1 || list[0].Score != "is" {
		t.Errorf("Selections = %d, %v", len(list), err)
	}
}

// manyNames returns a JSON list of n distinct names.
func manyNames(n int) string {
	b, _ := json.Marshal(func() []string {
		s := make([]string, n)
		for i := range s {
			s[i] = fmt.Sprint("g", i)
		}
		return s
	}())
	return string(b)
}

// failingAlg is a selector that fails on every batch after taking part
// of it, as a numerical failure may.
type failingAlg struct {
	online.Algorithm
	panics bool
}

func (f failingAlg) Update(g int, m *mat.Dense) error {
	f.Algorithm.Update(g, m) // the part taken
	if f.panics {
		panic("lapack: insufficient length of a")
	}
	return errors.New("numerical failure")
}

// A batch the selector fails on (a 500) is not logged as a step, and the
// state it may have changed is rebuilt from the log; values whose squares
// overflow are refused before the selector sees them.
func TestSelectionFailedBatchIsNoStep(t *testing.T) {
	s := newTestService(t, nil, Config{})
	ctx := context.Background()
	ref := upload(t, s, "ref.npy", npy(t, []int{5, 2}, []float64{1, 2, 3, 1, 2, 2, 0, 1, 4, 3}))
	sel, err := s.CreateSelection(ctx, []byte(`{"generators":["a","b"],"ref":"`+ref+`"}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.AddSamples(ctx, sel.ID, []byte(`{"generator":"a","features":[[1,2],[2,1]]}`)); err != nil {
		t.Fatal(err)
	}
	for _, panics := range []bool{false, true} {
		st, err := s.state(ctx, sel.ID)
		if err != nil {
			t.Fatal(err)
		}
		st.alg = failingAlg{st.alg, panics}
		st.mu.Unlock()
		_, err = s.AddSamples(ctx, sel.ID, []byte(`{"generator":"b","features":[[1,2],[3,1]]}`))
		if err == nil || fault.Classify(err) != fault.KindInternal {
			t.Fatalf("panics %v: a failing selector: %v", panics, err)
		}
		got, err := s.SelectionStatus(ctx, sel.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Steps != 1 || got.Generators[1].Batches != 0 || got.Generators[1].Samples != 0 || len(got.Skipped) != 0 {
			t.Errorf("panics %v: the failed batch counts: %+v", panics, got)
		}
	}
	// The state was rebuilt: the next batch is step 2 and b's first.
	res, err := s.AddSamples(ctx, sel.ID, []byte(`{"generator":"b","features":[[1,2],[3,1]]}`))
	if err != nil || res.Step != 2 || res.Samples != 2 {
		t.Errorf("after the failures: %+v, %v", res, err)
	}
	_, err = s.AddSamples(ctx, sel.ID, []byte(`{"generator":"a","features":[[1e300,1e300],[-1e300,1e300]]}`))
	var fe *fault.FieldError
	if !errors.As(err, &fe) || fe.Field != "features" || !strings.Contains(err.Error(), "at most") {
		t.Errorf("values whose squares overflow: %v", err)
	}
}

// A semicolon-separated CSV reference reads with sep ";" and, without it,
// is refused with the hint naming sep; sep is only for fid.
func TestSelectionReferenceSep(t *testing.T) {
	s := newTestService(t, nil, Config{})
	ctx := context.Background()
	var b strings.Builder
	r := rand.New(rand.NewPCG(3, 4))
	for range 50 {
		fmt.Fprintf(&b, "%g;%g;%g\n", r.NormFloat64(), r.NormFloat64(), r.NormFloat64())
	}
	ref := upload(t, s, "ref.csv", []byte(b.String()))
	create := func(cfg map[string]any) error {
		raw, _ := json.Marshal(cfg)
		_, err := s.CreateSelection(ctx, raw)
		return err
	}
	cfg := map[string]any{"score": "fid", "generators": []string{"a", "b"}, "ref": ref}
	if err := create(cfg); err == nil || !strings.Contains(err.Error(), "sep") {
		t.Errorf("without sep: %v, want the separator hint", err)
	}
	cfg["sep"] = ";"
	if err := create(cfg); err != nil {
		t.Errorf("sep ;: %v", err)
	}
	cfg["sep"] = "ab"
	var fe *fault.FieldError
	if err := create(cfg); !errors.As(err, &fe) || fe.Field != "sep" {
		t.Errorf("sep ab: %v, want a field error on sep", err)
	}
	if err := create(map[string]any{"score": "is", "generators": []string{"a", "b"}, "classes": 3, "sep": ";"}); err == nil {
		t.Error("sep with score is accepted")
	}
}

// A selection stored before fid_bonus existed has none in its
// configuration and ran the paper's bonus: the service rebuilds it so,
// and says so, while a new one defaults to auto.
func TestSelectionStoredWithoutBonus(t *testing.T) {
	store := NewMemStore()
	dir := t.TempDir()
	s := newTestService(t, store, Config{DataDir: dir})
	ctx := context.Background()
	id := fidSelection(t, s, "fid-ucb", 1)
	sel, err := store.GetSelection(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	var cfg map[string]any
	if err := json.Unmarshal(sel.Config, &cfg); err != nil || cfg["fid_bonus"] != "auto" {
		t.Fatalf("stored %s (%v), want fid_bonus auto", sel.Config, err)
	}
	delete(cfg, "fid_bonus")
	sel.ID = newID()
	sel.Config, _ = json.Marshal(cfg)
	if err := store.CreateSelection(ctx, sel); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ id, want string }{{id, "fducb2025"}, {sel.ID, "paper"}} {
		fresh := newTestService(t, store, Config{DataDir: dir}) // rebuilt from the store
		st, err := fresh.SelectionStatus(ctx, c.id)
		if err != nil || st.FIDBonus != c.want {
			t.Errorf("%s: %+v %v, want fid_bonus %s", c.id, st, err, c.want)
		}
	}
}
