package uncertainty

import (
	"context"
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/mat"

	"github.com/genlens/genlens/metric/evalstat"
	"github.com/genlens/genlens/network/nli"
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

// EntailmentGraph returns the similarity graph LM-Polygraph's EigValLaplacian,
// DegMat and Eccentricity build by default (NLI score, entail affinity):
// W = (E + Eᵀ)/2 of the entailment probabilities E_ij = P(entailment |
// premise i, hypothesis j), the diagonal included as judged (an answer's
// entailment of itself is the judge's, not 1). probs[i][j] holds the
// judge's label probabilities of (i, j), indexed by nli.Label.
func EntailmentGraph(probs [][][3]float64) *mat.SymDense {
	m := len(probs)
	w := mat.NewSymDense(m, nil)
	for i := range m {
		for j := i; j < m; j++ {
			w.SetSym(i, j, (probs[i][j][nli.Entailment]+probs[j][i][nli.Entailment])/2)
		}
	}
	return w
}

// KLEEntailmentGraph returns the graph of KLE from entailment, the
// weights of Nikitin et al. (NeurIPS 2024) of the labels: entailment 1,
// neutral ½, contradiction 0, in expectation over the judge's
// probabilities and averaged both ways, W = (1 + (E + Eᵀ)/2 − (C + Cᵀ)/2)/2
// of the entailment and contradiction probabilities E and C. It is half
// the graph of LM-Polygraph's KernelLanguageEntropy (which adds both
// directions without halving, and so doubles every weight). The
// diagonal, which L = D − W cancels, is as judged.
func KLEEntailmentGraph(probs [][][3]float64) *mat.SymDense {
	m := len(probs)
	w := mat.NewSymDense(m, nil)
	for i := range m {
		for j := i; j < m; j++ {
			e := (probs[i][j][nli.Entailment] + probs[j][i][nli.Entailment]) / 2
			c := (probs[i][j][nli.Contradiction] + probs[j][i][nli.Contradiction]) / 2
			w.SetSym(i, j, (1+e-c)/2)
		}
	}
	return w
}

// RougeSimilarity returns W with W_ij = RougeL-F of the token sequences
// toks[i] and toks[j] (evalstat.RougeLF, the measure that also judges
// correctness) and 1 on the diagonal. RougeL-F is symmetric, so W needs no
// symmetrising; two empty answers have RougeL-F 0, as everywhere else.
// toks must hold at least one answer (gonum has no empty matrices).
func RougeSimilarity(toks [][]string) *mat.SymDense {
	w, _ := RougeSimilarityContext(context.Background(), toks)
	return w
}

// RougeSimilarityContext is RougeSimilarity stopping, with ctx's error,
// within pairCheck pairs once ctx is done: one prompt's answers can be
// thousands of long ones, millions of pairs.
func RougeSimilarityContext(ctx context.Context, toks [][]string) (*mat.SymDense, error) {
	m := len(toks)
	w := mat.NewSymDense(m, nil)
	for i := 0; i < m; i++ {
		w.SetSym(i, i, 1)
		for j := i + 1; j < m; j++ {
			if (j-i)%pairCheck == 1 {
				if err := ctx.Err(); err != nil {
					return nil, err
				}
			}
			w.SetSym(i, j, evalstat.RougeLF(toks[i], toks[j]))
		}
	}
	return w, nil
}

// pairCheck is how many pairs of answers are compared between two looks
// at the context: 64 RougeL scores of answers of a thousand words take a
// few milliseconds, and a look takes as long as a short one.
const pairCheck = 64

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

// graph is a similarity matrix as the scores read it: W row-major in
// full, and its row sums.
type graph struct {
	m   int
	w   []float64
	deg []float64
	ok  bool // every degree positive and finite
}

func newGraph(w mat.Symmetric) graph {
	m := w.SymmetricDim()
	g := graph{m: m, w: make([]float64, m*m), deg: make([]float64, m), ok: true}
	if rs, isRaw := w.(mat.RawSymmetricer); isRaw && rs.RawSymmetric().Uplo == blas.Upper {
		// The upper triangle, without an interface call per element.
		raw := rs.RawSymmetric()
		for i := 0; i < m; i++ {
			row := raw.Data[i*raw.Stride : i*raw.Stride+m]
			for j := i; j < m; j++ {
				g.w[i*m+j], g.w[j*m+i] = row[j], row[j]
			}
		}
	} else {
		for i := 0; i < m; i++ {
			for j := i; j < m; j++ {
				v := w.At(i, j)
				g.w[i*m+j], g.w[j*m+i] = v, v
			}
		}
	}
	for i := range g.deg {
		for _, v := range g.w[i*m : (i+1)*m] {
			g.deg[i] += v
		}
		if !(g.deg[i] > 0) || math.IsInf(g.deg[i], 0) {
			g.ok = false
		}
	}
	return g
}

// eigenvalues returns the eigenvalues of the symmetric matrix a (m×m,
// row-major; overwritten) in ascending order, nil if the solver fails.
func eigenvalues(m int, a []float64) []float64 {
	var es mat.EigenSym
	if !es.Factorize(mat.NewSymDense(m, a), false) {
		return nil
	}
	return es.Values(nil)
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
func KLE(w mat.Symmetric, t float64) float64 { return newGraph(w).kle(t) }

func (g graph) kle(t float64) float64 {
	if !g.ok {
		return math.NaN()
	}
	m := g.m
	l := make([]float64, m*m)
	for i := range l {
		l[i] = -g.w[i]
	}
	for i := 0; i < m; i++ {
		l[i*m+i] += g.deg[i]
	}
	mu := eigenvalues(m, l)
	if mu == nil {
		return math.NaN()
	}
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
func EigV(w mat.Symmetric) float64 { return newGraph(w).eigv() }

func (g graph) eigv() float64 {
	if !g.ok {
		return math.NaN()
	}
	m := g.m
	n := make([]float64, m*m)
	for i := 0; i < m; i++ {
		for j := 0; j < m; j++ {
			n[i*m+j] = g.w[i*m+j] / math.Sqrt(g.deg[i]*g.deg[j])
		}
	}
	nu := eigenvalues(m, n)
	if nu == nil {
		return math.NaN()
	}
	var s float64
	for _, v := range nu {
		s += max(0, v)
	}
	return s
}

// Degree returns the degree-matrix uncertainty of Lin, Trivedi & Sun
// (TMLR 2024), tr(m I − D) / m² = 1 − Σ_i D_ii / m², one minus the mean
// similarity of all ordered pairs of answers, diagonal included: 0 when
// all answers are alike, 1 − 1/m when all differ. NaN when W has a row
// sum that is not positive.
func Degree(w mat.Symmetric) float64 { return newGraph(w).degree() }

func (g graph) degree() float64 {
	if !g.ok {
		return math.NaN()
	}
	m := float64(g.m)
	var s float64
	for _, d := range g.deg {
		s += d
	}
	return 1 - s/(m*m)
}

// EccThreshold is the eigenvalue bound of Ecc: the eigenvectors of the
// normalised Laplacian with eigenvalues below it embed the answers, as in
// the code of Lin, Trivedi & Sun and of LM-Polygraph.
const EccThreshold = 0.9

// Ecc returns the eccentricity of Lin, Trivedi & Sun (TMLR 2024): with
// the normalised Laplacian L = I − D^{-1/2} W D^{-1/2}, its k
// eigenvectors u_1..u_k of eigenvalue below thres embed answer j as
// v_j = (u_1[j], ..., u_k[j]), and
//
//	Ecc = sqrt(Σ_j ‖v_j − v̄‖²),
//
// the spread of the embedded answers about their mean: 0 when all answers
// are alike, sqrt(m − 1) when all differ, sqrt(c − 1) for c groups of
// mutually identical answers unrelated across groups. The value does not
// depend on the basis a solver picks within an eigenspace: it equals
// sqrt(k − ‖Vᵀ1‖²/m). NaN when W has a row sum that is not positive, or
// its eigendecomposition fails.
func Ecc(w mat.Symmetric, thres float64) float64 { return newGraph(w).ecc(thres) }

func (g graph) ecc(thres float64) float64 {
	if !g.ok {
		return math.NaN()
	}
	m := g.m
	l := mat.NewSymDense(m, nil)
	for i := 0; i < m; i++ {
		for j := i; j < m; j++ {
			v := -g.w[i*m+j] / math.Sqrt(g.deg[i]*g.deg[j])
			if i == j {
				v++
			}
			l.SetSym(i, j, v)
		}
	}
	var es mat.EigenSym
	if !es.Factorize(l, true) {
		return math.NaN()
	}
	vals := es.Values(nil)
	var vecs mat.Dense
	es.VectorsTo(&vecs)
	var s float64
	used := 0
	for k, lam := range vals {
		if !(lam < thres) {
			continue
		}
		used++
		var mean float64
		for j := 0; j < m; j++ {
			mean += vecs.At(j, k)
		}
		mean /= float64(m)
		for j := 0; j < m; j++ {
			d := vecs.At(j, k) - mean
			s += d * d
		}
	}
	// Each deviation of a unit eigenvector's entries from their mean is
	// rounded by about ε, so a spread within a few ε per entry is 0 (all
	// answers alike) read through rounding, which differs from one
	// eigensolver (and LAPACK) to another; report it as the 0 it is.
	if eps := 0x1p-52; s <= 64*eps*eps*float64(m*used) {
		return 0
	}
	return math.Sqrt(s)
}
