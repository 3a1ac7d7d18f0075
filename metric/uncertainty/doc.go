// Package uncertainty scores how uncertain an LLM is about its answer to
// each prompt from several sampled answers, and evaluates the scores
// against answer correctness.
//
// The first score is the predictive kernel entropy of Gruber & Buettner, "A
// Bias-Variance-Covariance Decomposition of Kernel Scores for Generative
// Models" (ICML 2024, Algorithm 1): with an embedder's vectors and a vector
// kernel (RBF, cosine, ...), or on the word tokens themselves with the
// contiguous-subsequence kernel when no embedder is at hand. The lexical-similarity baseline of Kuhn et al.
// (2023), the mean pairwise RougeL-F of the samples, is computed beside it.
//
// Three more scores are functions of the similarity graph W of the m
// samples (symmetric, 1 on the diagonal; RougeL-F of the words or the
// clipped cosine of the embeddings): the kernel language entropy (KLE) of
// Nikitin, Kossen, Gal & Marttinen, "Kernel Language Entropy: Fine-grained
// Uncertainty Quantification for LLMs from Semantic Similarities" (NeurIPS
// 2024), and the sum of eigenvalues of the graph Laplacian (EigV) and the
// degree-matrix score (Degree) of Lin, Trivedi & Sun, "Generating with
// Confidence: Uncertainty Quantification for Black-box Large Language
// Models" (TMLR 2024). All scores but lexical similarity grow with
// uncertainty.
//
// LM-Polygraph (github IINemo/lm-polygraph) implements the graph scores on
// NLI similarities. Its EigValLaplacian and DegMat compute the same
// formulas as EigV and Degree here. Its KernelLanguageEntropy differs from
// KLE as the paper defines it, which this package follows: it normalises the
// kernel to a unit diagonal and divides by m instead of by the trace, and
// it divides the entropy by log m; from an entailment judge its graph is
// twice KLEEntailmentGraph. (Before its commit b6e64721 it also took the
// Laplacian as W − D, a kernel expm(+t(D − W)).)
//
// Correctness of the answer under test is taken from the data when given,
// else RougeL-F(answer, reference) > 0.3 for any reference, the convention
// of the paper's experiments. With HoldoutFirst the answer under test is the
// first sample and all uncertainty scores use only the other samples, so
// the judged answer does not leak into its own uncertainty.
package uncertainty
