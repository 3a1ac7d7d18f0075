// Package entail opens the in-process entailment judges genlens runs by
// name (DeBERTa and BERT NLI cross-encoders) from a model directory, for
// the commands and the LLM proxy alike, so that both accept the same names
// with the same checks.
package entail
