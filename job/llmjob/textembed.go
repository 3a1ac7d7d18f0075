package llmjob

import (
	"context"
	"fmt"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/genlens/genlens/dataio"
	"github.com/genlens/genlens/fault"
	"github.com/genlens/genlens/job"
	"github.com/genlens/genlens/metric/uncertainty"
	"github.com/genlens/genlens/network/bert"
)

// textEmbedBatch is the number of texts embedded at once.
const textEmbedBatch = 64

// checkTextEmbedder checks the embedder fields of a request.
func checkTextEmbedder(name, weights, embeddings string) error {
	switch {
	case name == "" && weights != "":
		return fault.Fieldf("weights", "{weights} %s: give the embedder with {embedder}", weights)
	case name == "":
		return nil
	case embeddings != "":
		return fault.Fieldf("embedder", "{embedder} and {embeddings} both give the embeddings: give one")
	case weights == "":
		return fault.Fieldf("weights", "{embedder} %s needs {weights} DIR, the model's directory (config.json, vocab.txt or tokenizer.json, model.safetensors or pytorch_model.bin)", name)
	}
	if _, ok := bert.Lookup(name); !ok {
		return fault.Fieldf("embedder", "{embedder} %q: want one of %s", name, strings.Join(bert.Names(), ", "))
	}
	return nil
}

// loadTextEmbedder loads the embedder name from the model directory dir,
// a directory of the host: the command line's, or one the service's
// operator allowed (its jobs name it, and the service resolves the name
// before the job runs; see job.Command.ModelDirs).
func loadTextEmbedder(env job.Env, name, dir string) (*bert.Embedder, error) {
	spec, _ := bert.Lookup(name)
	return loadTextEmbedderPrefix(env, name, dir, spec.Query)
}

// loadTextEmbedderPrefix is loadTextEmbedder with the prefix put before
// every text.
func loadTextEmbedderPrefix(env job.Env, name, dir, prefix string) (*bert.Embedder, error) {
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

// embedSamples sets each prompt's embedding rows to the embeddings of its
// samples, computed in process; the samples take the embedder's query
// prefix, if it has one (e5's "query: ", for symmetric tasks).
func embedSamples(ctx context.Context, env job.Env, prompts []uncertainty.Prompt, recs []dataio.Record, name, dir string) error {
	e, err := loadTextEmbedder(env, name, dir)
	if err != nil {
		return err
	}
	var texts []string
	for _, r := range recs {
		texts = append(texts, r.Samples...)
	}
	vecs := make([][]float32, 0, len(texts))
	for i := 0; i < len(texts); i += textEmbedBatch {
		v, err := e.Forward(ctx, texts[i:min(len(texts), i+textEmbedBatch)])
		if err != nil {
			return fmt.Errorf("embedding the samples with %s: %w", name, err)
		}
		vecs = append(vecs, v...)
	}
	k := 0
	for i, r := range recs {
		if len(r.Samples) == 0 {
			continue
		}
		m := mat.NewDense(len(r.Samples), e.Dim(), nil)
		for j := range r.Samples {
			for c, x := range vecs[k] {
				m.Set(j, c, float64(x))
			}
			k++
		}
		prompts[i].Embeddings = m
	}
	return nil
}
