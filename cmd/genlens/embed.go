package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/genlens/genlens/fault"
	"github.com/genlens/genlens/internal/atomicfile"
	"github.com/genlens/genlens/job/reprjob"
	"github.com/genlens/genlens/network/bert"
)

func newEmbedCmd() *cobra.Command {
	req := reprjob.NewEmbedRequest()
	var out string
	cmd := &cobra.Command{
		Use:   "embed --embedder NAME --weights DIR --in texts.jsonl|.txt --out E.npy",
		Short: "Embed texts with a BERT sentence embedder, in process",
		Args:  args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if out == "" {
				return fault.Fieldf("out", "embed: {out} E.npy is required")
			}
			res, err := runJob(cmd, reprjob.Embed, req, "embedding texts")
			if err != nil {
				return err
			}
			if err := atomicfile.Write(out, res.WriteNPY); err != nil {
				return fmt.Errorf("writing %s: %w", out, err)
			}
			res.Path = out
			return emit(cmd, "", nil, res, func(w io.Writer) { jobOf(cmd).Text(w, &req, res) })
		},
	}
	fl := cmd.Flags()
	textEmbedderFlags(fl, &req.Embedder, &req.Weights)
	fl.StringVar(&out, "out", "", "the .npy to write (float64, texts x dim)")
	fl.Bool("json", false, "print one JSON document: texts, dim, embedder, prefix, weights_sha256, cache_hits")
	bindFlags(cmd, &req)
	return cmd
}

// textEmbedderFlags binds --embedder and --weights of the commands whose
// sample embeddings a BERT sentence embedder can compute in process.
func textEmbedderFlags(fl *pflag.FlagSet, name, weights *string) {
	fl.StringVar(name, "embedder", "", "compute the samples' embeddings in process with a sentence embedder: "+strings.Join(bert.Names(), ", ")+" (see docs/text-models.md)")
	fl.StringVar(weights, "weights", "", "with --embedder: the model's directory (config.json, vocab.txt or tokenizer.json, model.safetensors or pytorch_model.bin) or Hugging Face model id (org/name); default for e5-small-v2, all-minilm-l6-v2, bge-small-en-v1.5: their published model, fetched once")
}
