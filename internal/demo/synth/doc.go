// Package synth generates synthetic data with known structure for the demo,
// examples and benchmarks: sampled answers of a simulated LLM whose
// knowledge varies by question, a Gaussian ensemble whose kernel-score
// decomposition is known in closed form, and a simulated training run of
// an ensemble whose members drift and settle over epochs.
//
// Everything is drawn from a caller-supplied *rand.Rand, so a seed fixes
// the data bit for bit.
package synth
