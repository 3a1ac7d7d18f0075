package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/genlens/genlens/internal/console"
	"github.com/genlens/genlens/job"
	"github.com/genlens/genlens/job/commands"
	"github.com/genlens/genlens/job/llmjob"
)

// sampleFlags are the flags of sample, which entropy's one-step form
// shares.
type sampleFlags struct {
	req  llmjob.SampleRequest
	seed int64
	topP float64
}

func (s *sampleFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.Float64Var(&s.topP, "top-p", 1, "nucleus sampling; sent only when given")
	fl.Int64Var(&s.seed, "seed", 0, "random seed: each prompt's requests get seeds mixed from it and the prompt's id; none sent when not given")
	bindFlags(cmd, &s.req)
}

// apply copies the flags that count only when given into the request.
func (s *sampleFlags) apply(cmd *cobra.Command) llmjob.SampleRequest {
	r := s.req
	if cmd.Flags().Changed("seed") {
		v := s.seed
		r.Seed = &v
	}
	if cmd.Flags().Changed("top-p") {
		v := s.topP
		r.TopP = &v
	}
	return r
}

func newSampleCmd() *cobra.Command {
	s := &sampleFlags{req: llmjob.NewSampleRequest()}
	cmd := &cobra.Command{
		Use:   "sample --prompts P.jsonl --base-url URL --model NAME --out ANSWERS.jsonl [flags]",
		Short: "Sample answers (and embeddings) from an OpenAI-compatible endpoint",
		Args:  args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			f := s.apply(cmd)
			if f.Out == "" {
				return badUsage("sample: --out ANSWERS.jsonl is required (finished prompts are appended to it)")
			}
			_, err := runSample(cmd, f, jsonFlag(cmd), cmd.OutOrStdout())
			return err
		},
	}
	s.register(cmd)
	textEmbedderFlags(cmd.Flags(), &s.req.Embedder, &s.req.Weights)
	markGivenOnly(cmd, "seed", "top-p")
	cmd.Flags().StringVar(&s.req.Out, "out", "", "answers file (JSONL) to append to; ids already in it are skipped")
	cmd.Flags().Bool("json", false, "print the summary as one JSON document")
	return cmd
}

// runSample checks and runs a sample request with a progress bar, then
// prints its summary on w (entropy's one-step form passes stderr).
func runSample(cmd *cobra.Command, f llmjob.SampleRequest, asJSON bool, w io.Writer) (*llmjob.SampleResult, error) {
	if err := guardOutFile("--out", f.Out); err != nil {
		return nil, err
	}
	if in := sameFileAs(f.Out, f.Prompts); in != "" {
		return nil, badUsage("--out %s is the prompts file", f.Out)
	}
	report, meter, finish := console.Meter(cmd.ErrOrStderr(), "sample", "prompts", "tokens")
	env := job.CLIEnv(report, warnings(cmd))
	env.Models = models
	env.Meter = meter
	env.Fetch.Progress = console.Fetch(cmd.ErrOrStderr())
	res, err := llmjob.Sample(cmd.Context(), env, f)
	finish()
	if err != nil {
		if res != nil && res.Sampled > 0 {
			fmt.Fprintf(cmd.ErrOrStderr(), "genlens: sample: %d prompts saved in %s; run the same command again to sample the rest\n", res.Sampled, f.Out)
		}
		return res, err
	}
	if asJSON {
		return res, emit(cmd, "", nil, res, nil)
	}
	commands.Named("sample").Text(w, &f, res)
	return res, nil
}

// oneStepAnswers is where entropy's one-step form writes its samples
// without --out-answers: a file in a fresh temporary folder, removed after.
func oneStepAnswers() (path string, cleanup func(), err error) {
	dir, err := os.MkdirTemp("", "genlens-sample-")
	if err != nil {
		return "", nil, err
	}
	return filepath.Join(dir, "answers.jsonl"), func() { os.RemoveAll(dir) }, nil
}
