// Package tokenize splits free text into word tokens.
//
// The tokens feed the lexical scores of genlens: the RougeL-F correctness
// criterion and lexical-similarity baseline in evalstat, and the
// contiguous-subsequence kernel on token sequences. The original work
// tokenised with the language model's own tokenizer; genlens deliberately
// uses a model-free word tokenizer (lower-case, punctuation split) so that
// scores do not depend on which model produced the answers.
package tokenize
