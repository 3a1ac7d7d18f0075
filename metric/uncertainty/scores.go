package uncertainty

import (
	"fmt"
	"math"
	"strings"

	"github.com/genlens/genlens/metric/kernel"
)

// Score names an uncertainty score of Evaluate.
type Score string

// The scores. All but ScoreLexSim grow with uncertainty; lexical
// similarity is a confidence (higher means more certain) and enters the
// AUROC negated.
const (
	// ScoreKernelEntropy is the predictive kernel entropy of Gruber &
	// Buettner (ICML 2024) with Options.Kernel or Options.Sequence.
	ScoreKernelEntropy Score = "kernel-entropy"
	// ScoreLexSim is the mean pairwise RougeL-F of the samples.
	ScoreLexSim Score = "lexsim"
	// ScoreKLE is the kernel language entropy of the similarity graph
	// (KLE).
	ScoreKLE Score = "kle"
	// ScoreEigV is the sum of eigenvalues of the graph Laplacian (EigV).
	ScoreEigV Score = "eigv"
	// ScoreDegree is the degree-matrix uncertainty (Degree).
	ScoreDegree Score = "degree"
	// ScoreEcc is the eccentricity of the similarity graph (Ecc).
	ScoreEcc Score = "ecc"
)

// AllScores lists every score in the order of the result columns.
var AllScores = []Score{ScoreKernelEntropy, ScoreLexSim, ScoreKLE, ScoreEigV, ScoreDegree, ScoreEcc}

// DefaultSequence is the sequence kernel `genlens entropy` and the LLM
// proxy use unless told otherwise: common contiguous subsequences of
// words of lengths 1 and 2, summed, as the code of Gruber & Buettner ("A
// Bias-Variance-Covariance Decomposition of Kernel Scores for Generative
// Models", ICML 2024) computes it (their text uses length 2 alone).
var DefaultSequence = kernel.CS{T: 2, Cumulative: true}

// DefaultScores are the scores of Options with no Scores.
var DefaultScores = []Score{ScoreKernelEntropy, ScoreLexSim}

// Valid reports whether s is one of AllScores.
func (s Score) Valid() bool { return s.index() >= 0 }

// Graph reports whether s is computed from the similarity graph W of the
// samples (KLE, EigV, Degree, Ecc), and so depends on Options.Similarity.
func (s Score) Graph() bool {
	return s == ScoreKLE || s == ScoreEigV || s == ScoreDegree || s == ScoreEcc
}

// Key is the score's name as a JSON key and CSV column: kernel_entropy,
// lexical_similarity, kle, eigv, degree, ecc.
func (s Score) Key() string {
	switch s {
	case ScoreKernelEntropy:
		return "kernel_entropy"
	case ScoreLexSim:
		return "lexical_similarity"
	}
	return string(s)
}

func (s Score) index() int {
	for i, v := range AllScores {
		if v == s {
			return i
		}
	}
	return -1
}

// scoreSet is a set of scores, one bit per index in AllScores.
type scoreSet uint8

func newScoreSet(scores []Score) (scoreSet, error) {
	if scores == nil {
		scores = DefaultScores
	}
	if len(scores) == 0 {
		return 0, fmt.Errorf("uncertainty: no scores asked for (want some of %s)", ScoreNames())
	}
	var set scoreSet
	for _, s := range scores {
		i := s.index()
		if i < 0 {
			return 0, fmt.Errorf("uncertainty: unknown score %q (want %s)", string(s), ScoreNames())
		}
		set |= 1 << i
	}
	return set, nil
}

func (set scoreSet) has(s Score) bool { return set&(1<<s.index()) != 0 }

func (set scoreSet) graph() bool {
	return set.has(ScoreKLE) || set.has(ScoreEigV) || set.has(ScoreDegree) || set.has(ScoreEcc)
}

// ScoreNames returns the names of AllScores, comma-separated.
func ScoreNames() string {
	names := make([]string, len(AllScores))
	for i, s := range AllScores {
		names[i] = string(s)
	}
	return strings.Join(names, ", ")
}

// Similarity names how the graph scores measure the similarity of two
// samples.
type Similarity string

const (
	// SimilarityRougeL is the RougeL-F of the samples' word tokens
	// (RougeSimilarity), the measure that also judges correctness.
	SimilarityRougeL Similarity = "rougel"
	// SimilarityEmbedding is max(0, cosine) of the samples' embeddings
	// (CosineSimilarity).
	SimilarityEmbedding Similarity = "embedding"
	// SimilarityNLI is the entailment judge's probability of entailment,
	// both ways and averaged, as LM-Polygraph's graph estimators build
	// their default graph (EntailmentGraph; kle reads KLEEntailmentGraph).
	// The caller judges the samples: Prompt.Entailment.
	SimilarityNLI Similarity = "nli"
)

// DefaultKLETime is the heat-kernel time t of KLE when Options.KLETime is
// 0, the default of LM-Polygraph's KernelLanguageEntropy estimator.
const DefaultKLETime = 0.3

// Value returns r's value of score s (NaN when not computed).
func (r Result) Value(s Score) float64 {
	switch s {
	case ScoreKernelEntropy:
		return r.KernelEntropy
	case ScoreLexSim:
		return r.LexicalSimilarity
	case ScoreKLE:
		return r.KLE
	case ScoreEigV:
		return r.EigV
	case ScoreDegree:
		return r.Degree
	case ScoreEcc:
		return r.Ecc
	}
	return math.NaN()
}

// AUROC returns the summary's AUROC of score s (NaN when not computed).
func (s Summary) AUROC(score Score) float64 {
	switch score {
	case ScoreKernelEntropy:
		return s.AUROCKernelEntropy
	case ScoreLexSim:
		return s.AUROCLexicalSimilarity
	case ScoreKLE:
		return s.AUROCKLE
	case ScoreEigV:
		return s.AUROCEigV
	case ScoreDegree:
		return s.AUROCDegree
	case ScoreEcc:
		return s.AUROCEcc
	}
	return math.NaN()
}

func (s *Summary) setAUROC(score Score, v float64) {
	switch score {
	case ScoreKernelEntropy:
		s.AUROCKernelEntropy = v
	case ScoreLexSim:
		s.AUROCLexicalSimilarity = v
	case ScoreKLE:
		s.AUROCKLE = v
	case ScoreEigV:
		s.AUROCEigV = v
	case ScoreDegree:
		s.AUROCDegree = v
	case ScoreEcc:
		s.AUROCEcc = v
	}
}
