// Package wordpiece is the tokenizer of BERT and the models built on it
// (e5, MiniLM, bge): the basic tokenizer of Devlin et al., "BERT:
// Pre-training of Deep Bidirectional Transformers for Language
// Understanding" (NAACL 2019), which cleans the text, lower-cases it,
// strips accents and splits it on whitespace, punctuation and CJK
// ideographs, then greedy longest-match-first WordPiece over a
// vocabulary, then the [CLS] … [SEP] (… [SEP]) layout with token types
// and truncation to the model's length.
//
// The vocabulary comes from a model's vocab.txt (one token a line, the
// id its line number) or tokenizer.json (Hugging Face's tokenizers
// format, a WordPiece model with a BertNormalizer). Both readers price a
// file before they allocate for it and name the file and key of what
// they refuse.
package wordpiece
