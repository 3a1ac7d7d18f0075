// Package icljob runs the commands of the posterior hallucination rate
// of in-context learning (Jesson et al., "Estimating the Hallucination
// Rate of Generative AI", NeurIPS 2024): hallucination run, over a
// context and queries answered by an OpenAI-compatible endpoint or an
// exact Bayesian model, and hallucination simulate, which checks the
// estimator against exact rates. Package hallucination holds the method;
// this package is its request → result layer, as the other job/*job
// packages are for their domains.
package icljob
