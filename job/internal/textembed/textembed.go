// Package textembed loads the BERT sentence embedders the commands run in
// process (entropy's and sample's {embedder}, embed), checking their
// fields one way and keeping them loaded in the process's model cache.
package textembed

import (
	"context"
	"slices"
	"strings"

	"github.com/genlens/genlens/fault"
	"github.com/genlens/genlens/internal/hub"
	"github.com/genlens/genlens/job"
	"github.com/genlens/genlens/network/bert"
)

// Batch is the number of texts embedded at once.
const Batch = 64

// Check checks the embedder fields of a request: {embedder},
// {weights} and, where the request can read embeddings instead,
// {embeddings}.
func Check(name, weights, embeddings string) error {
	switch {
	case name == "" && weights != "":
		return fault.Fieldf("weights", "{weights} %s: give the embedder with {embedder}", weights)
	case name == "":
		return nil
	case embeddings != "":
		return fault.Fieldf("embedder", "{embedder} and {embeddings} both give the embeddings: give one")
	case weights == "" && !published(name):
		return fault.Fieldf("weights", "{embedder} %s needs {weights} DIR, the model's directory (config.json, vocab.txt or tokenizer.json, model.safetensors or pytorch_model.bin), or a Hugging Face model id (org/name)", name)
	}
	if _, ok := bert.Lookup(name); !ok {
		return fault.Fieldf("embedder", "{embedder} %q: want one of %s", name, strings.Join(bert.Names(), ", "))
	}
	return nil
}

// published reports whether the embedder name is fetched by name.
func published(name string) bool {
	m, ok := hub.Lookup(name)
	return ok && m.Repo != ""
}

// CheckPrefix checks a request's {prefix}, the choice of what goes
// before every text (bert.Prefixes), given its {embedder}.
func CheckPrefix(name, prefix string) error {
	switch {
	case prefix == "":
		return nil
	case name == "":
		return fault.Fieldf("prefix", "{prefix} %s applies to the texts of {embedder}: give the embedder", prefix)
	case !slices.Contains(bert.Prefixes, prefix):
		return fault.Fieldf("prefix", "{prefix} %q: want %s", prefix, strings.Join(bert.Prefixes, ", "))
	}
	return nil
}

// Prefix returns the text the embedder name puts before every text for
// the choice prefix (checked by CheckPrefix; "" is the model card's query
// prefix).
func Prefix(name, prefix string) string {
	spec, _ := bert.Lookup(name)
	p, _ := spec.PrefixFor(prefix)
	return p
}

// Load loads the embedder name, putting the prefix of the choice prefix
// (see Prefix) before every text, from the model directory dir,
// a directory of the host: the command line's, or one the service's
// operator allowed (its jobs name it, and the service resolves the name
// before the job runs; see job.Command.ModelDirs). dir may also be a
// Hugging Face model id, or empty for a model published under name
// (job.ModelFolder finds or fetches it).
func Load(ctx context.Context, env job.Env, name, dir, prefix string) (*bert.Embedder, error) {
	return LoadPrefix(ctx, env, name, dir, Prefix(name, prefix))
}

// LoadPrefix is Load with the text prefix put before every text.
func LoadPrefix(ctx context.Context, env job.Env, name, dir, prefix string) (*bert.Embedder, error) {
	dir, err := job.ModelFolder(ctx, env, "weights", name, dir, hub.BERTFiles)
	if err != nil {
		return nil, err
	}
	wf, err := bert.WeightsFile(dir)
	if err != nil {
		return nil, err
	}
	// Kept loaded for the next jobs, keyed by the weights file as image
	// networks are.
	return job.CachedLoad(env.Models, "text:"+name+" prefix:"+prefix, wf, func(string) (*bert.Embedder, error) {
		return bert.OpenEmbedder(name, dir, prefix)
	})
}
