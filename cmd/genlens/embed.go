package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/genlens/genlens/dataio"
	"github.com/genlens/genlens/fault"
	"github.com/genlens/genlens/job/llmjob"
	"github.com/genlens/genlens/network/bert"
)

func init() {
	extraCommands = append(extraCommands, extraCommand{"kernel", newEmbedCmd})
}

func newEmbedCmd() *cobra.Command {
	req := llmjob.NewEmbedRequest()
	var out string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "embed --embedder NAME --weights DIR --in texts.jsonl|.txt --out E.npy",
		Short: "Embed texts with a BERT sentence embedder, in process",
		Long: `Embed writes one vector per text (a line of a .txt, the --field of a .jsonl row)
to a (texts, dim) .npy, computed in process by a BERT sentence embedder
(` + strings.Join(bert.Names(), ", ") + `) from its Hugging Face directory:
config.json, vocab.txt or tokenizer.json, model.safetensors or pytorch_model.bin.
Vectors are cached by embedder, prefix, weights and text. See docs/text-models.md.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if out == "" {
				return fault.Fieldf("out", "embed: {out} E.npy is required")
			}
			res, err := runJob(cmd, llmjob.Embed, req, "embedding texts")
			if err != nil {
				return err
			}
			arr := &dataio.Array{Shape: []int{res.Texts, res.Dim}, Data: make([]float64, 0, res.Texts*res.Dim)}
			for _, v := range res.Embeddings {
				for _, x := range v {
					arr.Data = append(arr.Data, float64(x))
				}
			}
			if err := dataio.WriteNPY(out, arr); err != nil {
				return err
			}
			if asJSON {
				return dataio.EncodeJSON(cmd.OutOrStdout(), res)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "embedded %d texts (%d from the cache) with %s, prefix %q: %d×%d float64 in %s\nweights sha256 %s\n",
				res.Texts, res.CacheHits, res.Embedder, res.Prefix, res.Texts, res.Dim, out, res.WeightsSHA256)
			return nil
		},
	}
	fl := cmd.Flags()
	textEmbedderFlags(fl, &req.Embedder, &req.Weights)
	fl.StringVar(&out, "out", "", "the .npy to write")
	fl.BoolVar(&asJSON, "json", false, "print one JSON document: texts, dim, embedder, prefix, weights_sha256, cache_hits")
	bindFlags(cmd, &req)
	return cmd
}

// textEmbedderFlags binds --embedder and --weights of the commands whose
// sample embeddings a BERT sentence embedder can compute in process.
func textEmbedderFlags(fl *pflag.FlagSet, name, weights *string) {
	fl.StringVar(name, "embedder", "", "compute the samples' embeddings in process with a sentence embedder: "+strings.Join(bert.Names(), ", ")+" (see docs/text-models.md)")
	fl.StringVar(weights, "weights", "", "with --embedder: the model's directory (config.json, vocab.txt or tokenizer.json, model.safetensors or pytorch_model.bin)")
}
