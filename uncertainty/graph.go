package uncertainty

import (
	"math"

	"gonum.org/v1/gonum/mat"

	"genlens/evalstat"
)

// The graph scores below are functions of one matrix W of similarities
// between a prompt's m sampled answers: symmetric, nonnegative, with 1 on
// the diagonal (every answer is fully similar to itself). Its row sums are
// the degrees D_ii = Σ_j W_ij, each at least 1, so D^{-1/2} always exists.

// SimilarityGraph returns the similarity matrix of the scores from any
// square matrix s of nonnegative pairwise similarities (s_ij of answer i
// towards answer j, not necessarily symmetric, such as an entailment
// probability): W = (s + sᵀ)/2 off the diagonal and 1 on it, whatever s
// holds there. It panics if s is not square.
func SimilarityGraph(s mat.Matrix) *mat.SymDense {
	m, c := s.Dims()
	if m != c {
		panic("uncertainty: SimilarityGraph of a non-square matrix")
	}
	w := mat.NewSymDense(m, nil)
	for i := 0; i < m; i++ {
		w.SetSym(i, i, 1)
		for j := i + 1; j < m; j++ {
			w.SetSym(i, j, (s.At(i, j)+s.At(j, i))/2)
		}
	}
	return w
}

// RougeSimilarity returns W with W_ij = RougeL-F of the token sequences
// toks[i] and toks[j] (evalstat.RougeLF, the measure that also judges
// correctness) and 1 on the diagonal. RougeL-F is symmetric, so W needs no
// symmetrising; two empty answers have RougeL-F 0, as everywhere else.
func RougeSimilarity(toks [][]string) *mat.SymDense {
	m := len(toks)
	w := mat.NewSymDense(m, nil)
	for i := 0; i < m; i++ {
		w.SetSym(i, i, 1)
		for j := i + 1; j < m; j++ {
			w.SetSym(i, j, evalstat.RougeLF(toks[i], toks[j]))
		}
	}
	return w
}

// CosineSimilarity returns W with W_ij = max(0, cos(e_i, e_j)) for the rows
// e_i of emb, and 1 on the diagonal. Negative cosines are clipped because
// the graph scores need nonnegative weights (an answer pointing away from
// another is as unrelated to it as one orthogonal to it). A zero row has no
// direction: its similarity to every other row is 0.
func CosineSimilarity(emb mat.Matrix) *mat.SymDense {
	m, d := emb.Dims()
	rows := make([][]float64, m)
	norms := make([]float64, m)
	for i := range rows {
		rows[i] = make([]float64, d)
		mat.Row(rows[i], i, emb)
		var ss float64
		for _, x := range rows[i] {
			ss += x * x
		}
		norms[i] = math.Sqrt(ss)
	}
	w := mat.NewSymDense(m, nil)
	for i := 0; i < m; i++ {
		w.SetSym(i, i, 1)
		for j := i + 1; j < m; j++ {
			if norms[i] == 0 || norms[j] == 0 {
				continue
			}
			var dot float64
			for k, x := range rows[i] {
				dot += x * rows[j][k]
			}
			w.SetSym(i, j, max(0, dot/(norms[i]*norms[j])))
		}
	}
	return w
}

// degrees returns the row sums of w; ok is false when one is not a
// positive finite number (W is then no similarity matrix).
func degrees(w mat.Symmetric) (deg []float64, ok bool) {
	m := w.SymmetricDim()
	deg = make([]float64, m)
	for i := range deg {
		for j := 0; j < m; j++ {
			deg[i] += w.At(i, j)
		}
		if !(deg[i] > 0) || math.IsInf(deg[i], 0) {
			return deg, false
		}
	}
	return deg, true
}

// KLE returns the kernel language entropy of Nikitin, Kossen, Gal &
// Marttinen, "Kernel Language Entropy: Fine-grained Uncertainty
// Quantification for LLMs from Semantic Similarities" (NeurIPS 2024), with
// the heat kernel of the similarity graph W: the von Neumann entropy
//
//	KLE = −Σ_k λ_k log λ_k over the λ_k > 0,
//
// of the eigenvalues λ_k of ρ = K / tr K, K = expm(−t L), L = D − W. It
// is at most log m, reached when K ∝ I (m mutually unrelated answers, or
// t → 0), and falls towards log c for c groups of alike answers as t
// grows (0 when all are alike). NaN when W has a row sum that is not
// positive, or its eigendecomposition fails.
//
// K and ρ are never formed: L is symmetric with eigenvalues μ_k, so K has
// the same eigenvectors and eigenvalues exp(−t μ_k), and the λ_k are their
// softmax. Shifting the μ_k by their minimum (0 in exact arithmetic: L·1 =
// 0) changes nothing in the softmax and keeps every exponential ≤ 1, so no
// t overflows.
func KLE(w mat.Symmetric, t float64) float64 {
	deg, ok := degrees(w)
	if !ok {
		return math.NaN()
	}
	m := len(deg)
	l := mat.NewSymDense(m, nil)
	for i := 0; i < m; i++ {
		for j := i; j < m; j++ {
			v := -w.At(i, j)
			if i == j {
				v += deg[i]
			}
			l.SetSym(i, j, v)
		}
	}
	var es mat.EigenSym
	if !es.Factorize(l, false) {
		return math.NaN()
	}
	mu := es.Values(nil)
	lo := mu[0] // ascending
	var z float64
	for _, v := range mu {
		z += math.Exp(-t * (v - lo))
	}
	logZ := math.Log(z)
	var h float64
	for _, v := range mu {
		// log λ = −t (μ − μ_min) − log Z, exactly rather than log of a
		// rounded λ.
		if lambda := math.Exp(-t*(v-lo)) / z; lambda > 0 {
			h += lambda * (t*(v-lo) + logZ)
		}
	}
	return h
}

// EigV returns the sum of eigenvalues of the graph Laplacian of Lin,
// Trivedi & Sun, "Generating with Confidence: Uncertainty Quantification
// for Black-box Large Language Models" (TMLR 2024): with the normalised
// Laplacian L = I − D^{-1/2} W D^{-1/2} and its eigenvalues λ_k,
//
//	EigV = Σ_k max(0, 1 − λ_k),
//
// a continuous count of the clusters of meaning among the answers: 1 when
// all answers are alike, m when all differ, and c for c groups of mutually
// identical answers unrelated across groups. NaN when W has a row sum that
// is not positive, or its eigendecomposition fails.
//
// 1 − λ_k are the eigenvalues of D^{-1/2} W D^{-1/2}, whose positive
// eigenvalues are summed directly rather than through the rounding of
// 1 − (1 − ν).
func EigV(w mat.Symmetric) float64 {
	deg, ok := degrees(w)
	if !ok {
		return math.NaN()
	}
	m := len(deg)
	n := mat.NewSymDense(m, nil)
	for i := 0; i < m; i++ {
		for j := i; j < m; j++ {
			n.SetSym(i, j, w.At(i, j)/math.Sqrt(deg[i]*deg[j]))
		}
	}
	var es mat.EigenSym
	if !es.Factorize(n, false) {
		return math.NaN()
	}
	var s float64
	for _, nu := range es.Values(nil) {
		s += max(0, nu)
	}
	return s
}

// Degree returns the degree-matrix uncertainty of Lin, Trivedi & Sun
// (TMLR 2024), tr(m I − D) / m² = 1 − Σ_i D_ii / m², one minus the mean
// similarity of all ordered pairs of answers, diagonal included: 0 when
// all answers are alike, 1 − 1/m when all differ. NaN when W has a row
// sum that is not positive.
func Degree(w mat.Symmetric) float64 {
	deg, ok := degrees(w)
	if !ok {
		return math.NaN()
	}
	m := float64(len(deg))
	var s float64
	for _, d := range deg {
		s += d
	}
	return 1 - s/(m*m)
}
