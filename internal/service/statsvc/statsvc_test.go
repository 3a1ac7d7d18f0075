package statsvc_test

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"testing"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/genlens/genlens/fault"
	"github.com/genlens/genlens/internal/service/statsvc"
	"github.com/genlens/genlens/internal/store"
	"github.com/genlens/genlens/internal/store/records"
	"github.com/genlens/genlens/internal/testkit/dbtest"
	"github.com/genlens/genlens/metric/frechet"
)

// parts returns the part files of k shards of n random rows of dimension
// d, and the parts themselves.
func parts(t *testing.T, n, d, k int, prov frechet.Provenance) ([][]byte, []*frechet.Part) {
	t.Helper()
	rng := rand.New(rand.NewPCG(uint64(n), uint64(d)))
	x := mat.NewDense(n, d, nil)
	for i := range n {
		for j := range d {
			x.Set(i, j, rng.NormFloat64()+float64(j))
		}
	}
	var files [][]byte
	var ps []*frechet.Part
	for i := range k {
		a := frechet.NewAccumulator(d)
		a.AddRows(x.Slice(i*n/k, (i+1)*n/k, 0, d).(*mat.Dense))
		p := frechet.PartOf(a, i, k, frechet.Listing{Kind: "features", Count: n, Cols: d, SHA256: "abc"}, prov)
		var buf bytes.Buffer
		if err := frechet.EncodePart(&buf, p); err != nil {
			t.Fatal(err)
		}
		files, ps = append(files, buf.Bytes()), append(ps, p)
	}
	return files, ps
}

// stores are the stores the service runs over: in memory, and package
// store's on every backend dbtest offers.
func stores(t *testing.T) map[string]func(t *testing.T) statsvc.Store {
	out := map[string]func(t *testing.T) statsvc.Store{"mem": func(*testing.T) statsvc.Store { return &statsvc.MemStore{} }}
	for _, b := range dbtest.Backends(t) {
		out[b.Name] = func(t *testing.T) statsvc.Store {
			db, err := store.Open(context.Background(), b.DSN(t))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() })
			return db
		}
	}
	return out
}

// The service's merge is bit for bit frechet.MergeParts of the parts in
// shard order, whatever order they came in; duplicates change nothing,
// and a part of another provenance, shard count or dimension is refused
// by the key the store keeps.
func TestPutAndMerge(t *testing.T) {
	prov := frechet.Provenance{Embedder: "features", Dims: "4"}
	files, ps := parts(t, 40, 4, 3, prov)
	want := frechet.MergeParts(ps).Stats(1)
	other, _ := parts(t, 40, 4, 3, frechet.Provenance{Embedder: "inception", Dims: "4"})
	fewer, _ := parts(t, 40, 4, 2, prov)
	wider, _ := parts(t, 40, 5, 3, prov)
	for name, open := range stores(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			svc := statsvc.New(open(t), nil)
			for i, f := range [][]byte{files[2], files[0], files[2]} {
				a, err := svc.Put(ctx, "cifar", "part.npz", f)
				if err != nil {
					t.Fatal(err)
				}
				if a.Duplicate != (i == 2) || len(a.Missing) != []int{2, 1, 1}[i] || a.Missing[len(a.Missing)-1] != 1 {
					t.Errorf("put %d: %+v", i, a)
				}
			}
			for what, f := range map[string][]byte{"provenance": other[1], "shards": fewer[1], "dimension": wider[1]} {
				var ie *fault.InputError
				if _, err := svc.Put(ctx, "cifar", "x.npz", f); !errors.As(err, &ie) || !errors.Is(err, records.ErrMismatch) {
					t.Errorf("another %s: %v, want an input error wrapping ErrMismatch", what, err)
				}
			}
			if _, err := svc.Put(ctx, "cifar", "x.npz", files[0][:len(files[0])/2]); fault.Classify(err) != fault.KindInput {
				t.Errorf("a cut part: %v", err)
			}
			if _, err := svc.Put(ctx, "../x", "x.npz", files[1]); fault.Classify(err) != fault.KindField {
				t.Errorf("a bad name: %v", err)
			}
			if _, err := svc.Put(ctx, "cifar", "p1.npz", files[1]); err != nil {
				t.Fatal(err)
			}
			m, err := svc.Merge(ctx, "cifar")
			if err != nil {
				t.Fatal(err)
			}
			got := m.Acc.Stats(1)
			if len(m.Missing) != 0 || m.Prov != prov || m.Dim != 4 || got.N != want.N || !mat.Equal(got.Sigma, want.Sigma) {
				t.Errorf("merge: %+v, n %d, want %d and the same sigma bits", m, got.N, want.N)
			}
			if _, err := svc.Merge(ctx, "imagenet"); !errors.Is(err, records.ErrNotFound) {
				t.Errorf("unknown name: %v", err)
			}
		})
	}
}

// encodePart returns the file of p.
func encodePart(t *testing.T, p *frechet.Part) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := frechet.EncodePart(&buf, p); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// A part declaring a billion shards, or one row with a spread, is
// refused before anything is stored; a name held from before parts were
// bounded is refused before its missing shards are listed, and DELETE
// repairs it.
func TestHostilePartsAndDelete(t *testing.T) {
	prov := frechet.Provenance{Embedder: "features", Dims: "2"}
	_, ps := parts(t, 20, 2, 2, prov)
	huge := *ps[0]
	huge.Shards = 1_000_000_000
	lone := *ps[0]
	lone.N = 1
	hostile := map[string][]byte{"a billion shards": encodePart(t, &huge), "one row with a scatter": encodePart(t, &lone)}
	for name, open := range stores(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			st := open(t)
			svc := statsvc.New(st, nil)
			for what, f := range hostile {
				if _, err := svc.Put(ctx, "bad", "p.npz", f); fault.Classify(err) != fault.KindInput {
					t.Errorf("%s: %v, want an input error", what, err)
				}
				if _, _, err := svc.Set(ctx, "bad"); !errors.Is(err, records.ErrNotFound) {
					t.Errorf("%s: stored (%v)", what, err)
				}
			}
			// As stored by a version that did not bound the shards.
			if _, err := st.PutStatsPart(ctx, records.StatsPart{Name: "old", Shards: 1_000_000_000, Input: "x", SHA256: "00",
				Data: hostile["a billion shards"], Created: time.Unix(1, 0)}); err != nil {
				t.Fatal(err)
			}
			if _, _, err := svc.Set(ctx, "old"); fault.Classify(err) != fault.KindInput {
				t.Errorf("a poisoned name: %v, want an input error", err)
			}
			if _, err := svc.Merge(ctx, "old"); fault.Classify(err) != fault.KindInput {
				t.Errorf("merge of a poisoned name: %v, want an input error", err)
			}
			if err := svc.Delete(ctx, "old"); err != nil {
				t.Fatal(err)
			}
			if _, _, err := svc.Set(ctx, "old"); !errors.Is(err, records.ErrNotFound) {
				t.Errorf("after delete: %v", err)
			}
			if err := svc.Delete(ctx, "old"); !errors.Is(err, records.ErrNotFound) {
				t.Errorf("delete again: %v", err)
			}
			if _, err := svc.Put(ctx, "old", "p.npz", encodePart(t, ps[0])); err != nil {
				t.Errorf("a part after the repair: %v", err)
			}
		})
	}
}
