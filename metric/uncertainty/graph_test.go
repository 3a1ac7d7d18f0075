package uncertainty

import (
	"context"
	"math"
	"sort"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// entropyOf returns −Σ p log p of weights normalised to sum 1 (a closed
// form of KLE once the eigenvalues μ of L are known: the eigenvalues of
// ρ are exp(−t μ) / Σ exp(−t μ)).
func entropyOf(weights ...float64) float64 {
	var z float64
	for _, w := range weights {
		z += w
	}
	var h float64
	for _, w := range weights {
		if p := w / z; p > 0 {
			h -= p * math.Log(p)
		}
	}
	return h
}

// repeat returns n copies of v.
func repeat(v float64, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = v
	}
	return out
}

// blockOnes returns W for groups of mutually identical answers, unrelated
// across groups: W_ij = 1 within a group, c across groups.
func blockOnes(c float64, sizes ...int) *mat.SymDense {
	var group []int
	for g, n := range sizes {
		for range n {
			group = append(group, g)
		}
	}
	m := len(group)
	w := mat.NewSymDense(m, nil)
	for i := range m {
		for j := i; j < m; j++ {
			v := c
			if group[i] == group[j] {
				v = 1
			}
			w.SetSym(i, j, v)
		}
	}
	return w
}

func TestGraphScoresClosedForms(t *testing.T) {
	const tt = 0.3
	e := func(x float64) float64 { return math.Exp(-tt * x) }
	path := mat.NewSymDense(3, []float64{1, 1, 0, 1, 1, 1, 0, 1, 1})
	for _, tc := range []struct {
		name              string
		w                 *mat.SymDense
		kle, eigv, degree float64
	}{
		// Identical samples, m = 4: W = J (all ones), D = 4I.
		// Degree: 1 − Σ D_ii/m² = 1 − 16/16 = 0.
		// EigV: D^{-1/2} W D^{-1/2} = J/4 has eigenvalues 1, 0, 0, 0, so
		// the normalised Laplacian has 0, 1, 1, 1: Σ max(0, 1 − λ) = 1.
		// KLE: L = 4I − J has eigenvalues 0 (the ones vector) and 4
		// (three times); ρ has eigenvalues ∝ 1, e^{−4t} (×3).
		{"identical m=4", blockOnes(0, 4), entropyOf(append([]float64{1}, repeat(e(4), 3)...)...), 1, 0},
		// All different, m = 5: W = I, D = I, L = 0.
		// Degree: 1 − 5/25 = 0.8. EigV: normalised Laplacian 0, so 5.
		// KLE: K = I, ρ = I/5: log 5.
		{"all different m=5", mat.NewSymDense(5, []float64{
			1, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 1}), math.Log(5), 5, 0.8},
		// Two clusters of 3 and 2 identical answers: W = diag(J₃, J₂).
		// Degree: 1 − (3² + 2²)/5² = 12/25 = 0.48.
		// EigV: blocks J₃/3 and J₂/2, eigenvalues 1, 1, 0, 0, 0: 2.
		// KLE: L = diag(3I − J₃, 2I − J₂), eigenvalues 0, 0, 3, 3, 2,
		// so ρ ∝ 1, 1, e^{−3t}, e^{−3t}, e^{−2t}.
		{"two clusters 3+2", blockOnes(0, 3, 2), entropyOf(1, 1, e(3), e(3), e(2)), 2, 0.48},
		// Two clusters of 2, similarity c = 1/2 across: W = [J cJ; cJ J],
		// every degree 2(1 + c) = 3.
		// Degree: 1 − 4·3/16 = 1/4 = (1 − c)/2.
		// EigV: W has eigenvalues 2(1+c) = 3 (ones) and 2(1−c) = 1 ((1, 1,
		// −1, −1)) and 0, 0; divided by the degree 3: 1, 1/3, 0, 0, so
		// EigV = 1 + (1−c)/(1+c) = 4/3.
		// KLE: L = 3I − W has eigenvalues 0, 2, 3, 3.
		{"two clusters c=1/2", blockOnes(0.5, 2, 2), entropyOf(1, e(2), e(3), e(3)), 4.0 / 3, 0.25},
		// A path a–b–c: W = [1 1 0; 1 1 1; 0 1 1], degrees 2, 3, 2.
		// Degree: 1 − 7/9 = 2/9.
		// EigV: N = D^{-1/2} W D^{-1/2} has eigenvalue 1/2 on (1, 0, −1);
		// on (x, y, x) it acts as [1/2 1/√6; 2/√6 1/3], trace 5/6 and
		// determinant −1/6, so 1 and −1/6. The normalised Laplacian has
		// 0, 1/2, 7/6: EigV = 1 + 1/2 + max(0, −1/6) = 3/2 (the trace,
		// 4/3, would count the negative one).
		// KLE: L = [1 −1 0; −1 2 −1; 0 −1 1], the path Laplacian, with
		// eigenvalues 0, 1, 3.
		{"path", path, entropyOf(1, e(1), e(3)), 1.5, 2.0 / 9},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := KLE(tc.w, tt); math.Abs(got-tc.kle) > 1e-12 {
				t.Errorf("KLE = %.15g, want %.15g", got, tc.kle)
			}
			if got := EigV(tc.w); math.Abs(got-tc.eigv) > 1e-12 {
				t.Errorf("EigV = %.15g, want %.15g", got, tc.eigv)
			}
			if got := Degree(tc.w); math.Abs(got-tc.degree) > 1e-15 {
				t.Errorf("Degree = %.17g, want %.17g", got, tc.degree)
			}
		})
	}
}

// TestKLETimeLimits: t → 0 gives K → I, KLE → log m whatever W; a large
// t leaves one eigenvalue per connected component of the graph, so two
// clusters give log 2, and a huge t neither overflows nor gives NaN.
func TestKLETimeLimits(t *testing.T) {
	w := blockOnes(0, 3, 2)
	if got := KLE(w, 1e-12); math.Abs(got-math.Log(5)) > 1e-9 {
		t.Errorf("t→0: KLE = %v, want log 5", got)
	}
	// The zero eigenvalues come out as ±1e-16 or so; at t = 1e4 that
	// moves the λ by 1e-12, hence the tolerance.
	for _, tt := range []float64{50, 1e4} {
		if got := KLE(w, tt); math.Abs(got-math.Log(2)) > 1e-9 {
			t.Errorf("t=%g: KLE = %v, want log 2", tt, got)
		}
	}
	if got := KLE(blockOnes(0, 4), 1e4); math.Abs(got) > 1e-9 {
		t.Errorf("identical answers, t = 1e4: KLE = %v, want 0", got)
	}
	// At t = 1e300 the rounding of the zero eigenvalues (1e-16) decides
	// which survive, but the result stays a number in [0, log m].
	if got := KLE(w, 1e300); !(got >= 0 && got <= math.Log(5)) {
		t.Errorf("t = 1e300: KLE = %v", got)
	}
}

func TestGraphScoresRejectNonSimilarity(t *testing.T) {
	// A row summing to 0 (diagonal not 1, no neighbour): D^{-1/2}
	// undefined.
	w := mat.NewSymDense(2, []float64{0, 0, 0, 1})
	if !math.IsNaN(KLE(w, 0.3)) || !math.IsNaN(EigV(w)) || !math.IsNaN(Degree(w)) {
		t.Error("want NaN for a zero degree")
	}
}

// jacobiEigenvalues returns the eigenvalues of a symmetric matrix by
// cyclic Jacobi rotations, an algorithm independent of the LAPACK routine
// behind mat.EigenSym.
func jacobiEigenvalues(a [][]float64) []float64 {
	n := len(a)
	a2 := make([][]float64, n)
	for i := range a {
		a2[i] = append([]float64(nil), a[i]...)
	}
	a = a2
	for sweep := 0; sweep < 100; sweep++ {
		var off float64
		for p := 0; p < n; p++ {
			for q := p + 1; q < n; q++ {
				off += a[p][q] * a[p][q]
			}
		}
		if off < 1e-30 {
			break
		}
		for p := 0; p < n; p++ {
			for q := p + 1; q < n; q++ {
				if a[p][q] == 0 {
					continue
				}
				theta := (a[q][q] - a[p][p]) / (2 * a[p][q])
				tn := math.Copysign(1, theta) / (math.Abs(theta) + math.Sqrt(theta*theta+1))
				c := 1 / math.Sqrt(tn*tn+1)
				s := tn * c
				for k := 0; k < n; k++ { // columns p, q
					akp, akq := a[k][p], a[k][q]
					a[k][p], a[k][q] = c*akp-s*akq, s*akp+c*akq
				}
				for k := 0; k < n; k++ { // rows p, q
					apk, aqk := a[p][k], a[q][k]
					a[p][k], a[q][k] = c*apk-s*aqk, s*apk+c*aqk
				}
			}
		}
	}
	ev := make([]float64, n)
	for i := range ev {
		ev[i] = a[i][i]
	}
	sort.Float64s(ev)
	return ev
}

// expmSeries returns expm(a) by its Taylor series Σ aⁿ/n!, enough terms
// for the small norms of these tests.
func expmSeries(a [][]float64) [][]float64 {
	n := len(a)
	sum := make([][]float64, n)
	term := make([][]float64, n)
	for i := range sum {
		sum[i] = make([]float64, n)
		term[i] = make([]float64, n)
		sum[i][i], term[i][i] = 1, 1
	}
	for k := 1; k < 80; k++ {
		next := make([][]float64, n)
		for i := range next {
			next[i] = make([]float64, n)
			for j := 0; j < n; j++ {
				for l := 0; l < n; l++ {
					next[i][j] += term[i][l] * a[l][j]
				}
				next[i][j] /= float64(k)
			}
		}
		term = next
		for i := range sum {
			for j := range sum[i] {
				sum[i][j] += term[i][j]
			}
		}
	}
	return sum
}

// nliScores is an asymmetric matrix of the kind LM-Polygraph builds from
// an NLI model, p_entail(answer i ⇒ answer j), diagonal below 1: answers
// 0 and 1 agree, 2 and 3 agree, the pairs barely.
var nliScores = mat.NewDense(4, 4, []float64{
	0.98, 0.90, 0.10, 0.05,
	0.70, 0.99, 0.20, 0.10,
	0.05, 0.30, 0.97, 0.80,
	0.10, 0.05, 0.60, 0.95,
})

// TestGraphScoresAgainstLMPolygraph checks the scores on the matrix
// LM-Polygraph's estimators would see, with expected numbers from
// independent computations (plain sums, Jacobi rotations, a Taylor series
// of expm) of the formulas. LM-Polygraph (github IINemo/lm-polygraph,
// src/lm_polygraph/estimators) computes, for a matrix S of similarities:
//
//   - eig_val_laplacian.py (EigValLaplacian): W = (S + Sᵀ)/2, D =
//     diag(W.sum(axis=1)), L = I − D^{-1/2} W D^{-1/2}, Σ max(0, 1 − λ)
//     over eigh(L): the same as EigV.
//   - deg_mat.py (DegMat): trace(m − D)/m², where m − D subtracts D from
//     every entry but the trace reads the diagonal only, so 1 − Σ D_ii/m²:
//     the same as Degree.
//   - kernel_language_entropy.py (KernelLanguageEntropy, t = 0.3):
//     differs. Up to its commit b6e64721 its Laplacian was W − D
//     (degrees from column sums), so its heat kernel expm(−t(W − D)) was
//     expm(+t L) rather than the paper's expm(−t L), the variant this
//     test computes below; since then it is D − W. In every version it
//     normalises K to a unit diagonal and divides by m rather than by
//     tr K, and divides the entropy by log m. We follow the paper
//     (TestPolygraphCalculatorsReference reproduces the current class's
//     numbers from its own steps).
//
// Both EigValLaplacian and DegMat keep the NLI matrix's own diagonal
// (0.95 to 0.99 here); SimilarityGraph puts 1 there, as their Jaccard
// similarity does, so the expected numbers use W with ones on it.
func TestGraphScoresAgainstLMPolygraph(t *testing.T) {
	w := SimilarityGraph(nliScores)
	m := 4
	wa := make([][]float64, m)
	deg := make([]float64, m)
	for i := range wa {
		wa[i] = make([]float64, m)
		for j := range wa[i] {
			wa[i][j] = (nliScores.At(i, j) + nliScores.At(j, i)) / 2
			if i == j {
				wa[i][j] = 1
			}
			if w.At(i, j) != wa[i][j] {
				t.Fatalf("W[%d][%d] = %v, want %v", i, j, w.At(i, j), wa[i][j])
			}
			deg[i] += wa[i][j]
		}
	}

	// Degree: off the diagonal W holds 0.8 (0–1), 0.075 (0–2, 0–3, 1–3),
	// 0.25 (1–2), 0.7 (2–3); row sums 1.95, 2.125, 2.025, 1.85, so
	// 1 − 7.95/16 = 0.503125.
	if got := Degree(w); math.Abs(got-0.503125) > 1e-15 {
		t.Errorf("Degree = %.17g, want 0.503125", got)
	}

	// EigV: eigenvalues of I − D^{-1/2} W D^{-1/2} by Jacobi.
	lap := make([][]float64, m)
	for i := range lap {
		lap[i] = make([]float64, m)
		for j := range lap[i] {
			lap[i][j] = -wa[i][j] / math.Sqrt(deg[i]*deg[j])
		}
		lap[i][i]++
	}
	var eigv float64
	for _, l := range jacobiEigenvalues(lap) {
		eigv += max(0, 1-l)
	}
	if got := EigV(w); math.Abs(got-eigv) > 1e-12 {
		t.Errorf("EigV = %.15g, want %.15g", got, eigv)
	}
	// Two tight pairs, weakly joined: a little over 2 clusters.
	if !(eigv > 2 && eigv < 2.5) {
		t.Errorf("EigV %v of two joined pairs, want in (2, 2.5)", eigv)
	}

	// KLE: ρ = expm(−t L)/tr from the series, eigenvalues by Jacobi.
	const tt = 0.3
	ntl := make([][]float64, m)
	for i := range ntl {
		ntl[i] = make([]float64, m)
		for j := range ntl[i] {
			ntl[i][j] = tt * wa[i][j]
		}
		ntl[i][i] -= tt * deg[i]
	}
	k := expmSeries(ntl)
	var tr float64
	for i := range k {
		tr += k[i][i]
	}
	for i := range k {
		for j := range k[i] {
			k[i][j] /= tr
		}
	}
	var kle float64
	for _, l := range jacobiEigenvalues(k) {
		if l > 0 {
			kle -= l * math.Log(l)
		}
	}
	if got := KLE(w, tt); math.Abs(got-kle) > 1e-12 {
		t.Errorf("KLE = %.15g, want %.15g", got, kle)
	}

	// LM-Polygraph's steps before b6e64721 on the same W give another
	// number: with the sign of the exponent flipped the kernel puts its weight on the
	// non-constant eigenvectors, and with its normalisation and scaling
	// the result is a fraction of log m.
	ptl := make([][]float64, m)
	for i := range ptl {
		ptl[i] = make([]float64, m)
		for j := range ptl[i] {
			ptl[i][j] = -ntl[i][j] // −t (W − D)
		}
	}
	kp := expmSeries(ptl)
	for i := range kp {
		for j := range kp[i] {
			kp[i][j] /= math.Sqrt(kp[i][i]*kp[j][j]) * float64(m)
		}
	}
	var poly float64
	for _, l := range jacobiEigenvalues(kp) {
		if math.Abs(l) > 1e-8 {
			poly -= l * math.Log(l)
		}
	}
	poly /= math.Log(float64(m))
	if math.Abs(poly-kle) < 0.01 || math.Abs(poly-kle/math.Log(float64(m))) < 0.01 {
		t.Errorf("LM-Polygraph's variant %v is close to KLE %v: the comment above is wrong", poly, kle)
	}
}

// TestSimilarityMatrices: RougeL-F and clipped cosine, 1 on the diagonal.
func TestSimilarityMatrices(t *testing.T) {
	// "paris" vs "paris france": LCS 1, 2·1/(1+2) = 2/3; an empty answer
	// is 0 to everything, itself included off the diagonal.
	w := RougeSimilarity([][]string{{"paris"}, {"paris", "france"}, {}, {}})
	want := [][]float64{{1, 2.0 / 3, 0, 0}, {2.0 / 3, 1, 0, 0}, {0, 0, 1, 0}, {0, 0, 0, 1}}
	for i := range want {
		for j := range want[i] {
			if w.At(i, j) != want[i][j] {
				t.Errorf("rouge W[%d][%d] = %v, want %v", i, j, w.At(i, j), want[i][j])
			}
		}
	}
	// (1, 0), (1, 1): cos 1/√2; (1, 0), (−1, 0): cos −1, clipped to 0;
	// a zero row: 0. Lengths do not matter.
	emb := mat.NewDense(4, 2, []float64{1, 0, 3, 3, -2, 0, 0, 0})
	c := CosineSimilarity(emb)
	r := 1 / math.Sqrt2
	want = [][]float64{{1, r, 0, 0}, {r, 1, 0, 0}, {0, 0, 1, 0}, {0, 0, 0, 1}}
	for i := range want {
		for j := range want[i] {
			if math.Abs(c.At(i, j)-want[i][j]) > 1e-15 {
				t.Errorf("cosine W[%d][%d] = %v, want %v", i, j, c.At(i, j), want[i][j])
			}
		}
	}
	// Vectors in the positive orthant: W is their Gram matrix of unit
	// vectors, positive semidefinite, so every eigenvalue of
	// D^{-1/2} W D^{-1/2} is ≥ 0 and EigV is its trace Σ 1/D_ii.
	pos := mat.NewDense(3, 3, []float64{1, 0.2, 0, 0.5, 1, 0.1, 0.3, 0.3, 1})
	g := CosineSimilarity(pos)
	var trace float64
	for i := 0; i < 3; i++ {
		var d float64
		for j := 0; j < 3; j++ {
			d += g.At(i, j)
		}
		trace += 1 / d
	}
	if got := EigV(g); math.Abs(got-trace) > 1e-12 {
		t.Errorf("EigV of a PSD W = %v, want Σ 1/D_ii = %v", got, trace)
	}
}

// TestGraphScoresPermutationInvariant: relabelling the samples changes
// nothing.
func TestGraphScoresPermutationInvariant(t *testing.T) {
	w := SimilarityGraph(nliScores)
	perm := []int{2, 0, 3, 1}
	p := mat.NewSymDense(4, nil)
	for i := range perm {
		for j := i; j < 4; j++ {
			p.SetSym(i, j, w.At(perm[i], perm[j]))
		}
	}
	for name, f := range map[string]func(mat.Symmetric) float64{
		"kle": func(w mat.Symmetric) float64 { return KLE(w, 0.7) }, "eigv": EigV, "degree": Degree,
	} {
		if a, b := f(w), f(p); math.Abs(a-b) > 1e-12 {
			t.Errorf("%s: %v, permuted %v", name, a, b)
		}
	}
}

// The entailment graphs of the nli similarity, on a case worked by hand,
// and Evaluate reading them from Prompt.Entailment.
func TestEntailmentGraphs(t *testing.T) {
	// (i, j) → [contradiction, neutral, entailment]
	probs := [][][3]float64{
		{{0.05, 0.05, 0.9}, {0.1, 0.3, 0.6}},
		{{0.7, 0.1, 0.2}, {0.1, 0.1, 0.8}},
	}
	w := EntailmentGraph(probs)
	if want := mat.NewSymDense(2, []float64{0.9, 0.4, 0.4, 0.8}); !mat.EqualApprox(w, want, 1e-15) {
		t.Errorf("EntailmentGraph = %v, want %v", mat.Formatted(w), mat.Formatted(want))
	}
	// Off the diagonal: E = 0.4, C = 0.4, so (1 + 0.4 − 0.4)/2.
	k := KLEEntailmentGraph(probs)
	if want := mat.NewSymDense(2, []float64{(1 + 0.9 - 0.05) / 2, 0.5, 0.5, (1 + 0.8 - 0.1) / 2}); !mat.EqualApprox(k, want, 1e-15) {
		t.Errorf("KLEEntailmentGraph = %v, want %v", mat.Formatted(k), mat.Formatted(want))
	}
	p := Prompt{ID: "q", Samples: []string{"a", "b"}}
	opt := Options{Scores: []Score{ScoreDegree, ScoreKLE, ScoreLexSim}, Similarity: SimilarityNLI}
	res, _, err := Evaluate(context.Background(), []Prompt{p}, opt)
	if err != nil || res[0].Reason != "no entailment probabilities of the samples for the nli similarity" {
		t.Errorf("no entailment: %+v, %v", res[0], err)
	}
	p.Entailment = probs
	res, _, err = Evaluate(context.Background(), []Prompt{p}, opt)
	if err != nil {
		t.Fatal(err)
	}
	// Degree: 1 − (0.9 + 0.4 + 0.4 + 0.8)/4. KLE of two answers joined
	// by 0.5: L has eigenvalues 0 and 1, so λ ∝ 1, e^-0.3.
	l1 := math.Exp(-0.3) / (1 + math.Exp(-0.3))
	wantKLE := -(1-l1)*math.Log(1-l1) - l1*math.Log(l1)
	if r := res[0]; math.Abs(r.Degree-0.375) > 1e-15 || math.Abs(r.KLE-wantKLE) > 1e-14 || r.LexicalSimilarity != 0 {
		t.Errorf("degree %v (want 0.375), kle %v (want %v), lexsim %v", r.Degree, r.KLE, wantKLE, r.LexicalSimilarity)
	}
	p.Entailment = probs[:1]
	if _, _, err := Evaluate(context.Background(), []Prompt{p}, opt); err == nil {
		t.Error("entailment of 1 sample for 2: no error")
	}
}
