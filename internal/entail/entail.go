package entail

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/genlens/genlens/fault"
	"github.com/genlens/genlens/internal/hub"
	"github.com/genlens/genlens/network/bert"
	"github.com/genlens/genlens/network/deberta"
	"github.com/genlens/genlens/network/features"
	"github.com/genlens/genlens/network/nli"
)

// Models lists the names Open accepts.
var Models = []string{"deberta-large-mnli", "deberta", "bert"}

// Files returns the files of a model folder the judge name reads, as
// fetched from the Hugging Face hub: a DeBERTa's config, BPE tokenizer
// and weights, or a BERT cross-encoder's as package bert reads them.
func Files(name string) []hub.Want {
	if name == "bert" {
		return hub.BERTFiles
	}
	return hub.DeBERTaFiles
}

// Open opens the in-process NLI judge called name from the Hugging
// Face model directory dir (config.json, vocab.json, merges.txt and
// model.safetensors or pytorch_model.bin), wrapped by nli.Cached so that
// each ordered pair is judged once (OpenModel without the cache). "deberta-large-mnli" insists on that
// model's shape (24 layers, hidden 1024, 16 heads), so a directory of
// another model is not silently taken for it; "deberta" takes any DeBERTa
// (v1) NLI classifier; "bert" a BERT-architecture cross-encoder
// (BertForSequenceClassification: config.json, vocab.txt, weights), its
// labels read from its config.
func Open(name, dir string) (nli.Model, error) {
	m, err := OpenModel(name, dir)
	if err != nil {
		return nil, err
	}
	return nli.Cached(m), nil
}

// OpenModel is OpenNLI without the cache, for a caller whose pairs
// never come back (a long-running proxy, whose cache would only grow):
// it wraps each batch of its own in nli.Cached.
func OpenModel(name, dir string) (nli.Model, error) {
	if !slices.Contains(Models, name) {
		return nil, fault.Fieldf("nli", "{nli} %q: want %s", name, strings.Join(Models, ", "))
	}
	if dir == "" {
		return nil, fault.Fieldf("nli_weights", "{nli} %s needs {nli_weights} DIR, the model's directory", name)
	}
	if name == "deberta-large-mnli" {
		cfg, err := deberta.LoadConfig(filepath.Join(dir, "config.json"))
		if err != nil {
			return nil, err
		}
		if cfg.Layers != 24 || cfg.Hidden != 1024 || cfg.Heads != 16 {
			return nil, &fault.InputError{File: filepath.Join(dir, "config.json"), Msg: fmt.Sprintf(
				"is a %d-layer, %d-wide, %d-head DeBERTa, not deberta-large-mnli (24, 1024, 16); use {nli} deberta for another DeBERTa", cfg.Layers, cfg.Hidden, cfg.Heads)}
		}
	}
	if name == "bert" {
		wpath, err := bert.WeightsFile(dir)
		if err != nil {
			return nil, err
		}
		sum, err := features.HashWeights(wpath)
		if err != nil {
			return nil, err
		}
		c, err := bert.LoadClassifier(dir, name+" sha256:"+sum, 0)
		if err != nil {
			return nil, err
		}
		return c, nil
	}
	m, err := deberta.Open(dir, name)
	if err != nil {
		return nil, err
	}
	return m, nil
}
