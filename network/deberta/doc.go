// Package deberta runs DeBERTa (v1) sequence classifiers, the NLI judges
// of the semantic-entropy literature (microsoft/deberta-large-mnli), from
// the files a Hugging Face model directory holds: config.json,
// vocab.json and merges.txt (package bpe), and pytorch_model.bin or
// model.safetensors under Hugging Face's key names.
//
// The network is that of He, Liu, Gao & Chen, "DeBERTa: Decoding-enhanced
// BERT with Disentangled Attention", ICLR 2021, as Hugging Face's
// DebertaForSequenceClassification computes it: word embeddings (and,
// where the config asks, absolute positions and token types) through a
// LayerNorm; in every layer, attention scores that add to the content
// score q_i·k_j the content-to-position score q_i·Pk[δ] and the
// position-to-content score k_j·Pq[δ], δ = clamp(i − j + M, 0, 2M − 1)
// over the 2M relative position embeddings, all scaled by
// 1/√(3·head width); then the first token through the context pooler
// (dense and GELU) and the classifier.
//
// Tokens are columns: every activation is features × tokens, each
// linear layer one product W·X with W packed at load time for the SIMD
// SGEMM kernel. Padding never enters the arithmetic: each pair attends
// over its own tokens only, which is what the reference's masks give.
package deberta
