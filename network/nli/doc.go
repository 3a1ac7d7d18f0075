// Package nli is the contract between natural-language-inference models and
// the scores that cluster answers by meaning.
//
// Semantic entropy (Kuhn, Gal & Farquhar, "Semantic Uncertainty: Linguistic
// Invariances for Uncertainty Estimation in Natural Language Generation",
// ICLR 2023) puts two sampled answers in one cluster when each entails the
// other. The judge of entailment may be a cross-encoder run in process (a
// DeBERTa or BERT model fine-tuned on MNLI) or a chat model asked through an
// OpenAI-compatible endpoint; both implement Model.
package nli
