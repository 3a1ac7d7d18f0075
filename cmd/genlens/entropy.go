package main

import (
	"io"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/genlens/genlens/job/llmjob"
	"github.com/genlens/genlens/metric/kernel"
	"github.com/genlens/genlens/metric/uncertainty"
)

// entropyOutputs are the files 'entropy --out' writes.
var entropyOutputs = []string{"items.csv", "entropy.json", "kernel_entropy_by_correctness.png", "accuracy_rejection.png"}

func newEntropyCmd() *cobra.Command {
	f := llmjob.NewEntropyRequest()
	sf := &sampleFlags{req: llmjob.NewSampleRequest()}
	var outAnswers string
	var out, gamma, similarity, scores string
	var t int
	var kleT float64
	var cumulative bool
	cmd := &cobra.Command{
		Use:   "entropy ANSWERS.(jsonl|parquet) | --in ANSWERS [flags]",
		Short: "Kernel entropy and other uncertainty scores of sampled LLM answers per prompt, with AUROC",
		Args:  args(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, a []string) error {
			if err := positional(cmd, a, "in"); err != nil {
				return err
			}
			// The kernel-specific flags reach the request only when
			// given, so that the job refuses those the kernel ignores.
			ifGiven(cmd, "t", &f.T, &t)
			ifGiven(cmd, "cumulative", &f.Cumulative, &cumulative)
			ifGiven(cmd, "gamma", &f.Gamma, gamma)
			ifGiven(cmd, "scores", &f.Scores, scores)
			ifGiven(cmd, "similarity", &f.Similarity, similarity)
			ifGiven(cmd, "kle-t", &f.KLET, &kleT)
			s := sf.apply(cmd)
			if f.AsksModel() { // the sampling model is also the one ptrue and the other questions ask
				f.BaseURL, f.Model, f.APIKeyEnv, f.API = s.BaseURL, s.Model, s.APIKeyEnv, s.API
			}
			if cmd.Flags().Changed("prompts") {
				return runEntropyOneStep(cmd, f, s, outAnswers, out)
			}
			for _, name := range sampleFlagNames(cmd) {
				if f.BaseURL == "" || !strings.Contains(" base-url model api-key-env api ", " "+name+" ") {
					return badUsage("entropy: --%s samples answers and needs --prompts P.jsonl", name)
				}
			}
			return runEntropy(cmd, f, out)
		},
	}
	fl := cmd.Flags()
	textEmbedderFlags(fl, &f.Embedder, &f.Weights)
	fl.StringVar(&f.Kernel, "kernel", f.Kernel, "cs (word sequences) or a vector kernel: "+strings.Join(kernel.Names, ", "))
	fl.IntVar(&t, "t", uncertainty.DefaultSequence.T, "subsequence length of the cs kernel")
	fl.BoolVar(&cumulative, "cumulative", uncertainty.DefaultSequence.Cumulative, "cs kernel: sum subsequence lengths 1..t as the authors' code does; =false counts length t only, as the paper's text")
	fl.StringVar(&gamma, "gamma", "dim", "bandwidth of rbf/laplacian/poly: dim (1/d), median, or a number; dim by default here, a scale fixed by the dimension alone, so entropies of different files stay comparable (the commands comparing two sets default to median)")
	fl.StringVar(&scores, "scores", joinScores(uncertainty.DefaultScores), "comma-separated scores: "+llmjob.ScoreNames()+"; or all, every score computable from what is given")
	fl.StringVar(&similarity, "similarity", string(uncertainty.SimilarityRougeL), "similarity of two answers for the graph scores, cocoa-*, sentence-sar, token-sar, sar: rougel (RougeL-F of the words), embedding (max(0, cosine) of the embeddings) or nli (the entailment judge's probability of entailment, both ways averaged)")
	fl.Float64Var(&kleT, "kle-t", uncertainty.DefaultKLETime, "heat-kernel time t of kle")
	markGivenOnly(cmd, "t", "cumulative", "gamma", "scores", "similarity", "kle-t")
	fl.Float64Var(&f.Threshold, "rouge-threshold", uncertainty.DefaultRougeThreshold, "RougeL-F above which an answer is correct, in [0, 1)")
	renamedFlag(cmd, "threshold", "rouge-threshold")
	fl.StringVar(&out, "out", "", "directory for items.csv, entropy.json and charts")
	// The one-step form: sample, then score (see 'genlens sample --help').
	bindFlags(cmd, &f)
	sf.register(cmd)
	fl.StringVar(&outAnswers, "out-answers", "", "with --prompts: keep the sampled answers in this file (and resume from it)")
	for _, name := range sampleFlagNames(nil) {
		fl.Lookup(name).Usage = "with --prompts: " + fl.Lookup(name).Usage
	}
	return cmd
}

// sampleFlagNames lists the sample flags of entropy's one-step form: all
// of them (cmd nil), or those given.
func sampleFlagNames(cmd *cobra.Command) []string {
	var names []string
	c := &cobra.Command{}
	(&sampleFlags{}).register(c)
	fs := c.Flags()
	fs.AddFlag(&pflag.Flag{Name: "out-answers"})
	fs.VisitAll(func(fl *pflag.Flag) {
		// --prefix is entropy's own: its embedder's, also in one step.
		if fl.Name != "prompts" && fl.Name != "prefix" && (cmd == nil || cmd.Flags().Changed(fl.Name)) {
			names = append(names, fl.Name)
		}
	})
	return names
}

// runEntropyOneStep samples the prompts (into outAnswers, or a temporary
// file), then scores the answers.
func runEntropyOneStep(cmd *cobra.Command, f llmjob.EntropyRequest, s llmjob.SampleRequest, outAnswers, out string) error {
	if f.In != "" {
		return badUsage("entropy: give --in ANSWERS or --prompts PROMPTS, not both")
	}
	s.Out = outAnswers
	if s.Out == "" {
		path, cleanup, err := oneStepAnswers()
		if err != nil {
			return err
		}
		defer cleanup()
		s.Out = path
	}
	f.In = s.Out
	// Check the scoring flags before spending requests on the samples.
	if err := f.Validate(); err != nil {
		return err
	}
	if err := checkOut(cmd, &f, out, entropyOutputs, s.Prompts); err != nil {
		return err
	}
	if _, err := runSample(cmd, s, false, cmd.ErrOrStderr()); err != nil {
		return err
	}
	return runEntropy(cmd, f, out)
}

func runEntropy(cmd *cobra.Command, f llmjob.EntropyRequest, out string) error {
	if err := checkOut(cmd, &f, out, entropyOutputs); err != nil {
		return err
	}
	res, err := runJob(cmd, llmjob.Entropy, f, "entropy")
	if err != nil {
		return err
	}
	// On stderr, as every command's warnings are; --json keeps them under
	// "warnings" too.
	for _, m := range res.Warnings {
		warnings(cmd)(m)
	}
	res.Warnings = res.Warnings.Render(flagOf(cmd))
	res.OutDir = out
	return emit(cmd, out, res.Artifacts(), res, func(w io.Writer) { jobOf(cmd).Text(w, &f, res) })
}

func joinScores(s []uncertainty.Score) string {
	names := make([]string, len(s))
	for i, sc := range s {
		names[i] = string(sc)
	}
	return strings.Join(names, ",")
}
