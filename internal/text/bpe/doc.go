// Package bpe is GPT-2's byte-level byte-pair encoding, the tokenizer of
// RoBERTa and of DeBERTa (v1), read from the vocab.json and merges.txt a
// model ships.
//
// Text is split into words by the rules of GPT-2's pre-tokenisation
// pattern (Radford et al., "Language Models are Unsupervised Multitask
// Learners", 2019), written out by hand since Go's regexp has no
// lookahead: the contractions 's 't 're 've 'm 'll 'd, an optional space
// and a run of letters, of numbers, or of other non-space characters, and
// runs of white space, of which all but the last space go alone when a
// word follows. Each word's UTF-8 bytes are mapped to printable
// characters (the bytes-to-unicode table), then merged pair by pair in
// the order of merges.txt.
//
// Invalid UTF-8: every byte that does not start a valid UTF-8 sequence
// is read as U+FFFD, as Go's range over a string reads it, so the word it
// falls in holds the three bytes EF BF BD in its place. Text is text:
// "[SEP]" written in an answer is encoded as the characters it is made
// of, never as the special token.
package bpe
