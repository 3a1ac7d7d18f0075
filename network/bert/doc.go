// Package bert is the encoder of Devlin et al., "BERT: Pre-training of
// Deep Bidirectional Transformers for Language Understanding" (NAACL
// 2019), as Hugging Face's BertModel lays out its weights, and the
// sentence embedders built on it: e5-small-v2 (Wang et al., "Text
// Embeddings by Weakly-Supervised Contrastive Pre-training", 2022),
// all-MiniLM-L6-v2 (sentence-transformers) and bge-small-en-v1.5 (Xiao
// et al., "C-Pack: Packaged Resources To Advance General Chinese
// Embedding", 2023), each with the pooling its model card states; and
// the sequence-classification head, so that a BERT cross-encoder
// trained on MNLI is an nli.Model.
//
// A model directory holds config.json, the tokenizer (vocab.txt or
// tokenizer.json, package wordpiece) and model.safetensors or
// pytorch_model.bin. Every product runs on the SIMD SGEMM kernels in
// float32, tokens as the columns of the activations; the sequences of a
// batch sit side by side without padding, so a batch of short texts
// costs what its tokens cost.
package bert
