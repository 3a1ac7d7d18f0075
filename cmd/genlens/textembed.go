package main

import (
	"strings"

	"github.com/spf13/pflag"

	"github.com/genlens/genlens/bert"
)

// textEmbedderFlags binds --embedder and --weights of the commands whose
// sample embeddings a BERT sentence embedder can compute in process.
func textEmbedderFlags(fl *pflag.FlagSet, name, weights *string) {
	fl.StringVar(name, "embedder", "", "compute the samples' embeddings in process with a sentence embedder: "+strings.Join(bert.Names(), ", ")+" (see docs/text-models.md)")
	fl.StringVar(weights, "weights", "", "with --embedder: the model's directory (config.json, vocab.txt or tokenizer.json, model.safetensors or pytorch_model.bin)")
}
