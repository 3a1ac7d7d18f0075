package frechet

import (
	"fmt"
	"io"
	"io/fs"
	"math"
	"slices"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/genlens/genlens/dataio"
	"github.com/genlens/genlens/fault"
)

// This file holds partial statistics: the (n, mean, centred scatter) of
// one shard of a feature set, written by each process of a cluster job,
// and their merge into the statistics of the whole set.

// Listing identifies the input a sharded computation split: for a folder
// of images the count and the SHA-256 of its sorted, slash-separated
// paths relative to the folder (so a copy of the folder elsewhere gives
// the same listing); for a feature file its row count, column count and
// the SHA-256 of its bytes. Every part of one input holds the listing of
// the whole input, so parts of different inputs never merge.
type Listing struct {
	Kind   string // "folder" or "features"
	Count  int    // images, or rows of the feature file
	Cols   int    // feature file: columns; 0 for a folder
	SHA256 string // hex
}

// Part is the partial statistics of shard Shard (0-based) of Shards: the
// row count, the float64 mean and the centred scatter matrix
// M = Σ (x − x̄)(x − x̄)ᵀ of the rows of that shard, with the listing of
// the whole input and the provenance of the features.
type Part struct {
	N       int
	Mean    []float64
	Scatter *mat.SymDense
	Shard   int
	Shards  int
	Listing Listing
	Prov    Provenance
}

// Dim returns the feature dimension.
func (p *Part) Dim() int { return len(p.Mean) }

// PartOf returns the part of shard of shards summarising the rows added
// to a.
func PartOf(a *Accumulator, shard, shards int, l Listing, prov Provenance) *Part {
	return &Part{N: a.n, Mean: slices.Clone(a.mean), Scatter: a.Scatter(), Shard: shard, Shards: shards, Listing: l, Prov: prov}
}

// Scatter returns a copy of the centred scatter matrix
// M = Σ (x − x̄)(x − x̄)ᵀ of the rows added so far.
func (a *Accumulator) Scatter() *mat.SymDense {
	s := mat.NewSymDense(a.d, nil)
	s.CopySym(a.m2)
	return s
}

// AccumulatorOf returns an accumulator holding the rows p summarises, as
// if they had been added to it.
func AccumulatorOf(p *Part) *Accumulator {
	a := NewAccumulator(p.Dim())
	a.n = p.N
	copy(a.mean, p.Mean)
	a.m2.CopySym(p.Scatter)
	return a
}

// TakeAccumulator is AccumulatorOf without the copy: the accumulator
// takes over p's mean and scatter, and p must not be used afterwards. A
// merge of parts read one at a time from files uses it to save two
// d × d copies per part.
func TakeAccumulator(p *Part) *Accumulator {
	d := p.Dim()
	return &Accumulator{d: d, n: p.N, mean: p.Mean, m2: p.Scatter, buf: make([]float64, d), row: make([]float64, d)}
}

// partKeys are the .npz members of a part file besides mean and scatter.
var partKeys = []string{"n", "mean", "scatter", "shard", "shards", "input_kind", "input_count", "input_cols", "input_sha256",
	"embedder", "mode", "dims", "weights_sha256"}

// MaxPartDim bounds the dimension of a part file ReadPart accepts:
// a 16384-d scatter matrix is 2 GiB as float64.
const MaxPartDim = 16384

// MaxShards bounds the shard count of a part: more parts than any
// cluster job array runs, few enough that the list of missing shards of
// a name stays printable. A part declares its shard count, so the bound
// is checked before anything of that count is allocated.
const MaxShards = 100000

// contents returns the arrays of p's file.
func (p *Part) contents(meta bool) dataio.NPZContents {
	c := dataio.NPZContents{
		Ints: map[string]int64{"n": int64(p.N), "shard": int64(p.Shard), "shards": int64(p.Shards),
			"input_count": int64(p.Listing.Count), "input_cols": int64(p.Listing.Cols)},
		Texts: map[string]string{"input_kind": p.Listing.Kind, "input_sha256": p.Listing.SHA256,
			"embedder": p.Prov.Embedder, "mode": p.Prov.Mode, "dims": p.Prov.Dims, "weights_sha256": p.Prov.Weights},
	}
	if meta {
		return c
	}
	d := p.Dim()
	c.Arrays = map[string]*dataio.Array{"mean": {Shape: []int{d}, Data: slices.Clone(p.Mean)}}
	c.Symmetric = map[string]*mat.SymDense{"scatter": p.Scatter}
	return c
}

// WritePart writes p as an uncompressed .npz that np.load opens with its
// defaults (no pickles): n, shard, shards, input_count and input_cols as
// int64 scalars, mean (d,) and scatter (d, d) as float64, and input_kind,
// input_sha256, embedder, mode, dims and weights_sha256 as text. Equal
// parts give identical bytes.
func WritePart(path string, p *Part) error {
	return dataio.WriteNPZContents(path, p.contents(false))
}

// EncodePart writes p to w as WritePart writes it to a file.
func EncodePart(w io.Writer, p *Part) error {
	return dataio.EncodeNPZContents(w, p.contents(false))
}

// ReadPartInfo reads everything of a part file but mean and scatter: the
// cheap header a merge checks before reading any matrix. The Part's Mean
// and Scatter are nil; Dim is taken from the mean's shape.
func ReadPartInfo(fsys fs.FS, path string) (*Part, int, error) {
	keys, err := dataio.NPZKeysFS(fsys, path)
	if err != nil {
		return nil, 0, err
	}
	for _, k := range partKeys {
		if !slices.Contains(keys, k) {
			return nil, 0, &fault.InputError{File: path, Msg: fmt.Sprintf("not a part file of sharded statistics: missing %q (keys: %s)", k, strings.Join(keys, ", "))}
		}
	}
	p := &Part{}
	ints := []struct {
		key string
		dst *int
	}{{"n", &p.N}, {"shard", &p.Shard}, {"shards", &p.Shards}, {"input_count", &p.Listing.Count}, {"input_cols", &p.Listing.Cols}}
	for _, f := range ints {
		a, err := dataio.ReadArrayFS(fsys, path, dataio.ReadOptions{Key: f.key})
		if err != nil {
			return nil, 0, err
		}
		if a.Size() != 1 || a.Data[0] < 0 || a.Data[0] != math.Trunc(a.Data[0]) || a.Data[0] > 1<<53 {
			return nil, 0, &fault.InputError{File: path, Key: f.key, Msg: "want one non-negative integer"}
		}
		*f.dst = int(a.Data[0])
	}
	texts := []struct {
		key string
		dst *string
	}{{"input_kind", &p.Listing.Kind}, {"input_sha256", &p.Listing.SHA256}, {"embedder", &p.Prov.Embedder},
		{"mode", &p.Prov.Mode}, {"dims", &p.Prov.Dims}, {"weights_sha256", &p.Prov.Weights}}
	for _, f := range texts {
		if *f.dst, err = dataio.ReadNPZText(fsys, path, f.key); err != nil {
			return nil, 0, err
		}
	}
	switch {
	case p.Shards < 1:
		return nil, 0, &fault.InputError{File: path, Key: "shards", Msg: "want at least 1 shard"}
	case p.Shards > MaxShards:
		return nil, 0, &fault.InputError{File: path, Key: "shards", Msg: fmt.Sprintf("%d shards: at most %d", p.Shards, MaxShards)}
	case p.Shard >= p.Shards:
		return nil, 0, &fault.InputError{File: path, Key: "shard", Msg: fmt.Sprintf("shard %d out of range for %d shards (0-based)", p.Shard, p.Shards)}
	case p.N > p.Listing.Count:
		return nil, 0, &fault.InputError{File: path, Key: "n", Msg: fmt.Sprintf("%d rows in a shard of an input of %d", p.N, p.Listing.Count)}
	}
	d, err := npyDim(fsys, path)
	if err != nil {
		return nil, 0, err
	}
	return p, d, nil
}

// npyDim reads the length of the mean of a part file from its header
// only: the scatter's size follows from it and is checked before it is
// read.
func npyDim(fsys fs.FS, path string) (int, error) {
	a, err := dataio.ReadArrayFS(fsys, path, dataio.ReadOptions{Key: "mean", Ranks: []int{1}})
	if err != nil {
		return 0, err
	}
	d := a.Shape[0]
	if d > MaxPartDim {
		return 0, &fault.InputError{File: path, Key: "mean", Msg: fmt.Sprintf("dimension %d over the limit of %d", d, MaxPartDim)}
	}
	return d, nil
}

// ReadPart reads a part file written by WritePart. Every problem (a
// missing key, a wrong shape, a scatter matrix that is not symmetric or
// has a negative diagonal) is a *fault.InputError naming the file.
func ReadPart(fsys fs.FS, path string) (*Part, error) {
	p, d, err := ReadPartInfo(fsys, path)
	if err != nil {
		return nil, err
	}
	mean, err := dataio.ReadArrayFS(fsys, path, dataio.ReadOptions{Key: "mean", Ranks: []int{1}})
	if err != nil {
		return nil, err
	}
	p.Mean = mean.Data
	// The scatter's d × d float64 values, priced before they are decoded.
	if err := CheckDim(d); err != nil {
		return nil, err
	}
	sc, err := dataio.ReadArrayFS(fsys, path, dataio.ReadOptions{Key: "scatter", Ranks: []int{2}})
	if err != nil {
		return nil, err
	}
	if sc.Shape[0] != d || sc.Shape[1] != d {
		return nil, &fault.InputError{File: path, Key: "scatter", Msg: fmt.Sprintf("want a %d×%d matrix (len(mean) = %d), got shape %s", d, d, d, shape(sc.Shape))}
	}
	var scale float64
	for i := 0; i < d; i++ {
		v := sc.Data[i*d+i]
		if v < 0 {
			return nil, &fault.InputError{File: path, Key: "scatter", Field: fmt.Sprintf("scatter[%d][%d]", i, i), Msg: fmt.Sprintf("negative diagonal %g", v)}
		}
		scale = max(scale, v)
	}
	for i := 0; i < d; i++ {
		for j := i + 1; j < d; j++ {
			a, b := sc.Data[i*d+j], sc.Data[j*d+i]
			if a != b && math.Abs(a-b) > symTolerance*scale {
				return nil, &fault.InputError{File: path, Key: "scatter", Field: fmt.Sprintf("scatter[%d][%d]", i, j),
					Msg: fmt.Sprintf("not symmetric: %g vs scatter[%d][%d] = %g", a, j, i, b)}
			}
		}
	}
	if p.N < 2 {
		// One row (or none) has no spread: a non-zero scatter would
		// change the merged covariance from nothing.
		for _, v := range sc.Data {
			if v != 0 {
				return nil, &fault.InputError{File: path, Key: "scatter", Msg: fmt.Sprintf("non-zero scatter in a part of %d row(s)", p.N)}
			}
		}
	}
	// The upper triangle, in the array's own storage.
	p.Scatter = mat.NewSymDense(d, sc.Data)
	return p, nil
}

// Compatible returns "" when p and q are parts of one sharded
// computation (same shard count, input listing, provenance and
// dimension), and else what differs, in words.
func (p *Part) Compatible(q *Part) string {
	switch {
	case p.Shards != q.Shards:
		return fmt.Sprintf("a different shard count (%d vs %d)", q.Shards, p.Shards)
	case p.Listing != q.Listing:
		return fmt.Sprintf("a different input (%s of %d, sha256 %.12s vs %s of %d, sha256 %.12s)",
			q.Listing.Kind, q.Listing.Count, q.Listing.SHA256, p.Listing.Kind, p.Listing.Count, p.Listing.SHA256)
	case p.Prov != q.Prov:
		return fmt.Sprintf("a different provenance (%s vs %s)", q.Prov, p.Prov)
	case p.Mean != nil && q.Mean != nil && p.Dim() != q.Dim():
		return fmt.Sprintf("a different dimension (%d vs %d)", q.Dim(), p.Dim())
	}
	return ""
}

// TreeMerger merges accumulators in a fixed binary tree over the order
// they are pushed: adjacent pairs first, then pairs of pairs, as a binary
// counter carries. The tree depends only on the number pushed, so
// pushing parts sorted by shard index gives the same bits whatever order
// the parts were found in; it holds O(log K) accumulators at a time, so
// K parts are merged while reading them one by one.
type TreeMerger struct {
	stack []treeNode
}

type treeNode struct {
	acc  *Accumulator
	size int
}

// Push adds the next accumulator (which the merger may modify).
func (t *TreeMerger) Push(a *Accumulator) {
	t.stack = append(t.stack, treeNode{a, 1})
	for len(t.stack) >= 2 {
		l, r := t.stack[len(t.stack)-2], t.stack[len(t.stack)-1]
		if l.size != r.size {
			break
		}
		l.acc.Merge(r.acc)
		t.stack = t.stack[:len(t.stack)-2]
		t.stack = append(t.stack, treeNode{l.acc, l.size + r.size})
	}
}

// Result merges what is left, right to left, and returns the total; nil
// when nothing was pushed.
func (t *TreeMerger) Result() *Accumulator {
	if len(t.stack) == 0 {
		return nil
	}
	for len(t.stack) >= 2 {
		l, r := t.stack[len(t.stack)-2], t.stack[len(t.stack)-1]
		l.acc.Merge(r.acc)
		t.stack = t.stack[:len(t.stack)-2]
		t.stack = append(t.stack, treeNode{l.acc, l.size + r.size})
	}
	return t.stack[0].acc
}

// MergeParts merges parts by Chan, Golub and LeVeque's pairwise formula
// in the tree of TreeMerger over the parts sorted by shard index, so the
// result does not depend on the order of parts. It does not check that
// the parts belong together; see Part.Compatible.
func MergeParts(parts []*Part) *Accumulator {
	sorted := slices.Clone(parts)
	slices.SortStableFunc(sorted, func(a, b *Part) int { return a.Shard - b.Shard })
	var t TreeMerger
	for _, p := range sorted {
		t.Push(AccumulatorOf(p))
	}
	return t.Result()
}

// WriteStatsMeta writes s as WriteStats does, plus text entries (the
// provenance of the features), which pytorch-fid and np.load ignore or
// read as plain strings.
func WriteStatsMeta(path string, s Stats, meta map[string]string) error {
	c, err := statsContents(s, meta)
	if err != nil {
		return fmt.Errorf("%w (writing %s)", err, path)
	}
	return dataio.WriteNPZContents(path, c)
}

// EncodeStatsMeta writes to w what WriteStatsMeta writes to a file.
func EncodeStatsMeta(w io.Writer, s Stats, meta map[string]string) error {
	c, err := statsContents(s, meta)
	if err != nil {
		return err
	}
	return dataio.EncodeNPZContents(w, c)
}

func statsContents(s Stats, meta map[string]string) (dataio.NPZContents, error) {
	if err := s.check("statistics"); err != nil {
		return dataio.NPZContents{}, err
	}
	d := s.Dim()
	c := dataio.NPZContents{Arrays: map[string]*dataio.Array{"mu": {Shape: []int{d}, Data: slices.Clone(s.Mu)}},
		Symmetric: map[string]*mat.SymDense{"sigma": s.Sigma}, Texts: meta}
	if s.N > 0 {
		c.Arrays["n"] = &dataio.Array{Shape: []int{1}, Data: []float64{float64(s.N)}}
	}
	return c, nil
}
