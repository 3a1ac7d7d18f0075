// Package semantic computes the uncertainty scores of sampled LLM answers
// that group the answers by meaning: answers are clustered by
// bidirectional entailment (two answers share a cluster when each entails
// the other, given the question), then
//
//   - SE, semantic entropy (Kuhn, Gal & Farquhar, "Semantic Uncertainty:
//     Linguistic Invariances for Uncertainty Estimation in Natural Language
//     Generation", ICLR 2023): −Σ_c p(c) log p(c) with p(c) the sum of the
//     sequence probabilities of its answers, normalised over the samples;
//   - SEDiscrete, discrete semantic entropy (Farquhar, Kossen, Kuhn & Gal,
//     "Detecting hallucinations in large language models using semantic
//     entropy", Nature 2024): the same with p(c) the cluster's share of the
//     samples, needing no log-probabilities;
//   - NumSets, the number of clusters (Lin, Trivedi & Sun, "Generating with
//     Confidence: Uncertainty Quantification for Black-box Large Language
//     Models", TMLR 2024).
//
// Entailment comes from any nli.Model; this package only reads the
// relation it is given.
package semantic
