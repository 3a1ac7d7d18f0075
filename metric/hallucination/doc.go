// Package hallucination estimates how often a conditional generative model
// (CGM) hallucinates when it answers a query in context, following Jesson et
// al., "Estimating the Hallucination Rate of Generative AI" (NeurIPS 2024).
//
// An in-context learning problem is a model, a context D_n = (x_i, y_i)_1..n
// and a query x. Under the Bayesian view of in-context learning the model's
// predictive p(y | x, D_n) is a posterior predictive, averaging an unknown
// mechanism f over its posterior. A response y is a hallucination with
// respect to f when it falls outside the (1-ε)-likely set of p(y | x, f),
//
//	A(f, x) = { y : log p(y | x, f) >= Q_ε(f, x) },
//
// and the posterior hallucination rate (PHR, Definition 4) is the
// probability that a response drawn from p(y | x, D_n) is a hallucination for
// an f drawn from the posterior. Estimate computes it with nothing but the
// model's own sampling and log-probabilities (Algorithms 1 and 2), together
// with the total, aleatoric (Algorithm 3) and epistemic uncertainty of
// Appendix D. Rate is Algorithm 2 on its own, which also gives the true
// hallucination rate when the mechanism is known and the model hallucination
// rate (MHR) when an evaluation set stands in for it; ErrorRate is Eq. 9.
//
// # Models
//
// A model implements CGM: it is conditioned on a context once (Condition)
// and the result, a Conditioned, samples imagined pairs, samples and scores
// responses, and is extended one pair at a time (Extend) while Algorithm 1
// imagines the N-n future examples. Conditioning and extension return new
// values and never modify the receiver, so one Conditioned is shared safely
// by concurrent goroutines. A model that can imagine a whole continuation
// faster (updating a private copy of its state in place) implements
// Imaginer; the draws must be the same. Backends: bayeslin (Bayesian linear regression,
// exact posterior), categorical (Dirichlet-categorical classifier, exact
// posterior predictive) and openai (an OpenAI-compatible completions
// server that returns prompt log-probabilities with echo, such as vLLM).
//
// # What Algorithm 1 estimates
//
// With N-n imagined examples Algorithm 1 estimates the PHR truncated at N
// (the paper's Eq. 8): the reference p(y | x, D) of an imagined dataset is
// still wider than the mechanism's p(y | x, f), so the estimate sits a
// little below Definition 4 when N-n examples leave the task uncertain, and
// the gap closes as N-n grows. On the exact models of bayeslin and
// categorical the tests compute the truncated target exactly and find the
// estimator unbiased for it, with the Monte Carlo error Result.StdErr
// reports; the gap to Definition 4 is about 0.01 at the paper's settings.
//
// # The ε-quantile convention
//
// Every estimator in this package takes Q̂, the ε-quantile of a sample
// s_1..s_K of log-probabilities, to be the ⌈εK⌉-th smallest value: the
// inverse of the empirical distribution function (Hyndman and Fan type 1),
// which is the sample version of the paper's Eq. 15,
// Q_ε = inf{q : ε <= P(S <= q)}. A response is a hallucination when its
// log-probability is strictly below Q̂ (Eq. 6 and Algorithm 2, line 10).
// Consequences, all tested:
//
//   - at most ⌈εK⌉-1 < εK of the sample lies strictly below Q̂, so the
//     empirical likely set always holds at least 1-ε of the sample, also for
//     discrete responses with ties: a label the reference gives probability
//     0.10 is never a hallucination at ε = 0.05;
//   - for continuous responses and a model equal to the reference, the
//     expected rate is exactly ⌈εK⌉/(K+1) (0.04998 for ε = 0.05, K = 2000);
//   - εK is rounded to nine decimals before the ceiling, so 0.05 x 2000 is
//     100, not 101 because of binary floating point.
//
// The linear interpolation of numpy's default quantile (evalstat.Quantile)
// is not used: it puts Q̂ between two sample values and so depends on
// spacing that carries no probability. OutsideLikelySet applies the same
// rule to a known discrete distribution.
//
// # Simulation
//
// On a model with an exact posterior the estimate can be checked against
// the truth, as the paper's Figure 3 does: Simulate draws tasks (a
// mechanism from the prior, a context, a query) at several context sizes
// through a TaskFunc such as bayeslin.Model.Task or categorical.Model.Task,
// which add the exact PHR and the true hallucination rate to Algorithm 1's
// estimate, and Summarize reduces them to one Sweep per context size.
//
// # Randomness and concurrency
//
// Randomness comes from a caller-supplied *rand.Rand in every method, so a
// seed fixes every draw. Estimate derives one generator per imagined
// dataset from Options.Seed and the dataset's index, and Simulate one seed
// per task from its context size and index (par.Mix in both), and both
// fan out through par.For: up to Options.Concurrency datasets or
// SimulateOptions.Workers tasks at once. Results do not depend on the
// number of workers or on scheduling, and cancelling the context stops
// the work between datasets.
package hallucination
