// Package uncertainty scores how uncertain an LLM is about its answer to
// each prompt from several sampled answers, and evaluates the scores
// against answer correctness.
//
// The score is the predictive kernel entropy of Gruber & Buettner, "A
// Bias-Variance-Covariance Decomposition of Kernel Scores for Generative
// Models" (ICML 2024, Algorithm 1): with an embedder's vectors and a vector
// kernel (RBF, cosine, ...), or on the word tokens themselves with the
// contiguous-subsequence kernel when no embedder is at hand. The lexical-similarity baseline of Kuhn et al.
// (2023), the mean pairwise RougeL-F of the samples, is computed beside it.
//
// Correctness of the answer under test is taken from the data when given,
// else RougeL-F(answer, reference) > 0.3 for any reference, the convention
// of the paper's experiments. With HoldoutFirst the answer under test is the
// first sample and all uncertainty scores use only the other samples, so
// the judged answer does not leak into its own uncertainty.
package uncertainty
