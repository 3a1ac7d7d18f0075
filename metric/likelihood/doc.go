// Package likelihood computes the uncertainty scores of sampled LLM
// answers that read only the token log-probabilities an endpoint returns:
// predictive entropy and its length-normalised form over sampled answers,
// and the maximum sequence probability, perplexity and mean token entropy
// of one (greedy) answer.
//
// Every score grows with uncertainty. A score that cannot be computed
// (no logprobs, no top-K alternatives) is an error naming why, never 0.
//
// References: Malinin & Gales, "Uncertainty Estimation in Autoregressive
// Structured Prediction", ICLR 2021 (predictive entropy, length
// normalisation); Kuhn, Gal & Farquhar, "Semantic Uncertainty", ICLR 2023
// (the same baselines); Fadeeva et al., "LM-Polygraph", EMNLP 2023 demos
// (maximum sequence probability, perplexity, mean token entropy).
package likelihood
