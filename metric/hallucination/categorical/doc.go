// Package categorical is an in-context classifier with an exact posterior
// predictive: the Dirichlet-categorical model. It is a conditional
// generative model whose answers are known exactly, used to check the
// hallucination-rate estimators of package hallucination on discrete
// responses, and behind the completions API of package llmtest to check
// the OpenAI backend end to end.
//
// Inputs x take one of G values ("input groups"), labels y one of L values.
// The mechanism f is one label distribution θ_g per group, drawn from
// Dirichlet(α) independently; inputs are uniform over the groups and do not
// depend on f:
//
//	θ_g ~ Dir(α_1..α_L),  x ~ U{0..G-1},  y | x, f ~ Categorical(θ_x)
//
// Given a context with c_{g,y} examples of label y in group g, the posterior
// predictive is the Pólya urn (α_y + c_{x,y}) / (Σα + c_x), so the model is
// exchangeable by construction. The posterior hallucination rate of
// Definition 4 is computed from the exact Dirichlet posterior (Posterior.PHR):
// with the Beta distribution function for two labels, by Monte Carlo over
// θ with the inner sum exact otherwise. The true hallucination rate and the
// entropies of Appendix D are exact sums.
//
// # Seeding convention
//
// Each random draw (one response, or one imagined pair) takes one seed from
// the caller's generator, DrawSeed(r), and draws its uniforms from
// NewStream(seed). The completions server of package llmtest follows
// the same rule with the request's "seed" field, so the model called
// directly and the same model called through the OpenAI API with the same
// seeds produce the same answers bit for bit.
package categorical
