// Package chatnli is an nli.Model that asks an OpenAI-compatible chat
// model whether one answer entails another, as Farquhar, Kossen, Kuhn &
// Gal ("Detecting hallucinations in large language models using semantic
// entropy", Nature 2024) do with an LLM in place of a DeBERTa NLI model.
//
// The prompt (Prompt) asks for exactly one word; an answer that is not
// one of entailment, contradiction or neutral is refused: the pair is
// reported neutral (no relation claimed, so never merged by entailment)
// and counted in Refused, for the caller to warn about. Every ordered
// pair is asked once per Judge.
package chatnli
