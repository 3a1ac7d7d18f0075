// Package bayeslin is Bayesian linear regression on fixed features of a
// scalar input, as a conditional generative model with an exact posterior:
// the yardstick against which genlens checks the hallucination-rate
// estimators of package hallucination.
//
// The model (Jesson et al. 2024, Appendix G.1.2, with the domain of Section 3.1):
//
//	w ~ N(0, S² I),  x ~ U[lo, hi] (default [-2, 2]),  y | x, w ~ N(w·φ(x), σ²)
//
// with features φ that are polynomial (Poly: 1, x, ..., x^deg) or random
// ReLU units (ReLU). Given a context D the posterior of w is Gaussian,
// N(m, Σ), and so is the posterior predictive,
// p(y | x, D) = N(φ(x)·m, σ² + v(x)) with v(x) = φ(x)ᵀ Σ φ(x).
//
// Because f(x) = w·φ(x) is Gaussian under the posterior, the posterior
// hallucination rate of Definition 4 has a closed form. Outside the
// (1-ε)-likely set of p(y | x, f) = N(f(x), σ²) means |y - f(x)| > z σ with
// z = Φ⁻¹(1 - ε/2); under the posterior y - f(x) = (y - μ) - (f(x) - μ) is
// the difference of two independent centred normals with variances σ² + v
// and v, so
//
//	PHR(x) = P(|N(0, σ² + 2v)| > z σ) = 2 Φ(-z σ / sqrt(σ² + 2 v(x))),
//
// which tends to ε as the context grows (v -> 0). Posterior.ExactPHR
// returns it; tests check it against Definition 4 evaluated by sampling f
// from the posterior. The true hallucination rate for a known w
// (Definition 3), and the entropies of Appendix D, are closed forms too.
//
// Conditioning is a rank-one update of (m, Σ) per example, O(d²), so the
// N-n imagined examples of Algorithm 1 cost O((N-n) d²) per imagined
// dataset; a whole context is conditioned on at once through the
// precision matrix I/S² + ΦᵀΦ/σ², one SYRK call (package linalg).
package bayeslin
