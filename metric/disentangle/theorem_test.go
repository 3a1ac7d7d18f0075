package disentangle

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// gaussianBlocks describes images of a 6x6 grey grid whose four 3x3
// quadrants are Gaussian blocks: block B is mu_B + A_B z_B + s ε with its
// own latent z_B ~ N(0, I_2) and pixel noise ε ~ N(0, I_9). With shared
// set, every block also loads on one latent w ~ N(0, 1) common to all
// blocks, which makes the blocks dependent (the negative control).
type gaussianBlocks struct {
	mu     [4]float64 // block mean shift (added to every pixel)
	scale  [4]float64 // multiplies the block's loadings
	shared float64    // loading of the common latent
}

const blockNoise = 0.3

var quadrantGrid = Grid{6, 6, 1}

// quadrant returns the block (0..3) of pixel p of the 6x6 grid.
func quadrant(p int) int { return (p/6)/3*2 + (p%6)/3 }

// loadings returns the 36x(8+1) loading matrix: two latents per block and
// the shared one in the last column.
func (gb gaussianBlocks) loadings() *mat.Dense {
	a := mat.NewDense(36, 9, nil)
	for p := 0; p < 36; p++ {
		b := quadrant(p)
		i := (p/6)%3*3 + (p%6)%3                                        // position within the block, 0..8
		a.Set(p, 2*b, gb.scale[b]*(1+0.1*float64(i)))                   // brightness
		a.Set(p, 2*b+1, gb.scale[b]*0.6*math.Cos(float64(i)*math.Pi/4)) // pattern
		a.Set(p, 8, gb.shared)
	}
	return a
}

func (gb gaussianBlocks) mean() []float64 {
	m := make([]float64, 36)
	for p := range m {
		m[p] = gb.mu[quadrant(p)]
	}
	return m
}

func (gb gaussianBlocks) cov() *mat.SymDense {
	a := gb.loadings()
	s := mat.NewSymDense(36, nil)
	s.SymOuterK(1, a)
	for p := 0; p < 36; p++ {
		s.SetSym(p, p, s.At(p, p)+blockNoise*blockNoise)
	}
	return s
}

func (gb gaussianBlocks) sample(r *rand.Rand, n int) *mat.Dense {
	a := gb.loadings()
	mu := gb.mean()
	x := mat.NewDense(n, 36, nil)
	z := make([]float64, 9)
	for i := 0; i < n; i++ {
		for k := range z {
			z[k] = r.NormFloat64()
		}
		for p := 0; p < 36; p++ {
			v := mu[p] + blockNoise*r.NormFloat64()
			for k, zk := range z {
				v += a.At(p, k) * zk
			}
			x.Set(i, p, v)
		}
	}
	return x
}

// gaussRBF returns E exp(-gamma ||Z||²) for Z ~ N(m, S) restricted to the
// coordinates idx: det(I + 2γS)^{-1/2} exp(-γ mᵀ (I + 2γS)⁻¹ m).
func gaussRBF(m []float64, s mat.Symmetric, idx []int, gamma float64) float64 {
	d := len(idx)
	a := mat.NewSymDense(d, nil)
	mv := mat.NewVecDense(d, nil)
	for i, p := range idx {
		mv.SetVec(i, m[p])
		for j, q := range idx {
			if j >= i {
				v := 2 * gamma * s.At(p, q)
				if i == j {
					v++
				}
				a.SetSym(i, j, v)
			}
		}
	}
	var ch mat.Cholesky
	if !ch.Factorize(a) {
		panic("not positive definite")
	}
	var sol mat.VecDense
	if err := ch.SolveVecTo(&sol, mv); err != nil {
		panic(err)
	}
	return math.Exp(-0.5*ch.LogDet() - gamma*mat.Dot(mv, &sol))
}

// trueCMS is the population CMS of the RBF kernel between p and q on the
// pixels idx.
func trueCMS(p, q gaussianBlocks, idx []int, gamma float64) float64 {
	sp, sq := p.cov(), q.cov()
	var s2p, s2q, spq mat.SymDense
	s2p.ScaleSym(2, sp)
	s2q.ScaleSym(2, sq)
	spq.AddSym(sp, sq)
	mp, mq := p.mean(), q.mean()
	delta := make([]float64, 36)
	for i := range delta {
		delta[i] = mp[i] - mq[i]
	}
	zero := make([]float64, 36)
	return gaussRBF(delta, &spq, idx, gamma) / math.Sqrt(gaussRBF(zero, &s2p, idx, gamma)*gaussRBF(zero, &s2q, idx, gamma))
}

// Theorem 1 on images made of independent blocks: the clusters found from
// the training images are the blocks, and the product of the cluster CMS
// values matches the image-wise CMS.
//
// Tolerance: 0.01 on CMS values near 0.92. Both sides are averages over
// 8 x 8 pairs of batches of b = 150 images. The plug-in norms include the
// diagonal, so E||μ̂||² = 1/b + (1 - 1/b)||μ||²: the image-wise CMS is
// biased down by about (1/||μ||² - 1)/b ≈ 1% here and each cluster CMS
// by ≈ 0.2%, so the two sides differ by ≈ 0.004 in expectation before any
// sampling noise. Over 20 seeds the difference image - product had mean
// -0.0037 and standard deviation 0.0015, so 0.01 is the bias plus four
// standard deviations. As a control, blocks made dependent through a
// shared latent (whose loading differs between P and Q) gave a difference
// of -0.049 ± 0.008 (5 seeds); the test requires more than 0.025 there.
func TestTheorem1IndependentBlocks(t *testing.T) {
	const theorem1Tol = 0.01
	p := gaussianBlocks{scale: [4]float64{1, 1, 1, 1}}
	q := gaussianBlocks{mu: [4]float64{0, 1.2, 0, 0}, scale: [4]float64{1, 1, 2, 1}}
	// Fixed gamma: 1 / E||X - X'||² = 1 / (2 tr S_P).
	gamma := 1 / (2 * mat.Trace(p.cov()))

	r := rand.New(rand.NewPCG(2024, 1))
	train, test, gen := p.sample(r, 500), p.sample(r, 1200), q.sample(r, 1200)
	res, err := Analyze(context.Background(), train, test, []*mat.Dense{gen}, quadrantGrid, Options{Clusters: 4, Gamma: gamma})
	if err != nil {
		t.Fatal(err)
	}
	// The clusters are the quadrants (in some order: all have 9 pixels).
	blockOf := map[int]int{}
	for px, c := range res.Labels {
		b, ok := blockOf[c]
		if !ok {
			blockOf[c], b = quadrant(px), quadrant(px)
		}
		if b != quadrant(px) {
			t.Fatalf("pixel %d (quadrant %d) in cluster %d with quadrant %d", px, quadrant(px), c, b)
		}
	}
	c := res.Sets[0]
	var all []int
	for i := 0; i < 36; i++ {
		all = append(all, i)
	}
	imgTrue := trueCMS(p, q, all, gamma)
	prodTrue := 1.0
	for cl := 0; cl < 4; cl++ {
		var idx []int
		for px, l := range res.Labels {
			if l == cl {
				idx = append(idx, px)
			}
		}
		v := trueCMS(p, q, idx, gamma)
		prodTrue *= v
		t.Logf("cluster %d (quadrant %d): CMS %.4f, population %.4f, within CKA %.3f", cl, blockOf[cl], c.CMSClusters[cl], v, res.Within[cl])
		if math.Abs(c.CMSClusters[cl]-v) > 0.01 {
			t.Errorf("cluster %d: CMS %.4f, population value %.4f", cl, c.CMSClusters[cl], v)
		}
	}
	diff := c.CMSImage - c.CMSProduct
	t.Logf("image CMS %.4f (population %.4f), product %.4f (population %.4f), difference %.4f", c.CMSImage, imgTrue, c.CMSProduct, prodTrue, diff)
	if math.Abs(imgTrue-prodTrue) > 1e-12 {
		t.Errorf("population: image CMS %v != product %v (Theorem 1)", imgTrue, prodTrue)
	}
	if math.Abs(diff) > theorem1Tol {
		t.Errorf("|image CMS - product| = %.4f, want <= %g", math.Abs(diff), theorem1Tol)
	}
	for a := 0; a < 4; a++ {
		for b := 0; b < 4; b++ {
			if a != b && res.Between[a][b] > 0.05 {
				t.Errorf("CKA between clusters %d and %d = %.3f, want ~0", a, b, res.Between[a][b])
			}
		}
	}

	// Control: a latent shared by all blocks, whose loading differs
	// between P and Q, breaks the independence; the product then misses
	// the image-wise CMS (the labels are kept from above).
	pd := gaussianBlocks{scale: p.scale, shared: 2}
	qd := gaussianBlocks{mu: q.mu, scale: q.scale}
	test, gen = pd.sample(r, 1200), qd.sample(r, 1200)
	cd, err := Compare(context.Background(), test, gen, quadrantGrid, res.Labels, gamma, DefaultCMSBatch)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("dependent blocks: image CMS %.4f, product %.4f, difference %.4f", cd.CMSImage, cd.CMSProduct, cd.CMSImage-cd.CMSProduct)
	if math.Abs(cd.CMSImage-cd.CMSProduct) < 2.5*theorem1Tol {
		t.Errorf("dependent blocks: |image CMS - product| = %.4f, want well above the tolerance", math.Abs(cd.CMSImage-cd.CMSProduct))
	}
}
