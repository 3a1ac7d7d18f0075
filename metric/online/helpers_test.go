package online

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/genlens/genlens/metric/frechet"
)

// gaussFamily is a variance-controlled family of Gaussian generators, the
// analogue in feature space of the truncation experiment of Hu, Leung
// & Farnia (arXiv 2024) (Section
// 7): the reference is N(0, Σ_r) and generator g is N(0, factors[g]·Σ_r).
// Σ_r = Q diag(spectrum) Qᵀ for a random rotation Q.
type gaussFamily struct {
	ref   *FIDReference
	pools []*mat.Dense
	root  *mat.Dense // Σ_r = root rootᵀ
}

func newGaussFamily(t testing.TB, d int, spectrum func(i int) float64, factors []float64, poolRows int, seed uint64) gaussFamily {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	a := mat.NewDense(d, d, nil)
	for i := range a.RawMatrix().Data {
		a.RawMatrix().Data[i] = rng.NormFloat64()
	}
	var qr mat.QR
	qr.Factorize(a)
	var q mat.Dense
	qr.QTo(&q)
	root := mat.NewDense(d, d, nil)
	for i := 0; i < d; i++ {
		for j := 0; j < d; j++ {
			root.Set(i, j, q.At(i, j)*math.Sqrt(spectrum(j)))
		}
	}
	sigma := mat.NewSymDense(d, nil)
	sigma.SymOuterK(1, root)
	ref, err := NewFIDReference(frechet.Stats{Mu: make([]float64, d), Sigma: sigma})
	if err != nil {
		t.Fatal(err)
	}
	f := gaussFamily{ref: ref, root: root}
	for _, s := range factors {
		z := mat.NewDense(poolRows, d, nil)
		for i := range z.RawMatrix().Data {
			z.RawMatrix().Data[i] = rng.NormFloat64()
		}
		p := mat.NewDense(poolRows, d, nil)
		p.Mul(z, root.T())
		p.Scale(math.Sqrt(s), p)
		f.pools = append(f.pools, p)
	}
	return f
}

// linspace returns n values from lo to hi.
func linspace(lo, hi float64, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = lo + (hi-lo)*float64(i)/float64(n-1)
	}
	return out
}

// classFamily returns pools of class-probability rows over k classes,
// softmax of Gaussian logits: a sample's class c is drawn from a prior
// over the classes of width widths[g] (exp(−j²/(2w²)), so a small width
// collapses onto the first classes), its logits are 6·e_c + N(0, I), and
// they are divided by temps[g] before the softmax (a high temperature
// gives unconfident rows).
func classFamily(k int, widths, temps []float64, poolRows int, seed uint64) []*mat.Dense {
	rng := rand.New(rand.NewPCG(seed, 0xc1a55))
	pools := make([]*mat.Dense, len(widths))
	prior := make([]float64, k)
	z := make([]float64, k)
	for g, w := range widths {
		var tot float64
		for j := range prior {
			prior[j] = math.Exp(-float64(j*j) / (2 * w * w))
			tot += prior[j]
		}
		p := mat.NewDense(poolRows, k, nil)
		for i := 0; i < poolRows; i++ {
			u := rng.Float64() * tot
			c := 0
			for ; c < k-1; c++ {
				if u -= prior[c]; u <= 0 {
					break
				}
			}
			mx := math.Inf(-1)
			for j := range z {
				z[j] = rng.NormFloat64()
				if j == c {
					z[j] += 6
				}
				z[j] /= temps[g]
				mx = max(mx, z[j])
			}
			row := p.RawRowView(i)
			var s float64
			for j, v := range z {
				row[j] = math.Exp(v - mx)
				s += row[j]
			}
			for j := range row {
				row[j] /= s
			}
		}
		pools[g] = p
	}
	return pools
}
