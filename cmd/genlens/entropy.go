package main

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"gonum.org/v1/gonum/mat"

	"genlens/chart"
	"genlens/dataio"
	"genlens/kernel"
	"genlens/uncertainty"
)

type entropyFlags struct {
	in, embeddings, embeddingsKey  string
	kernel, gamma, out             string
	t                              int
	cumulative, holdoutFirst, json bool
	threshold                      float64
}

func newEntropyCmd() *cobra.Command {
	var f entropyFlags
	cmd := &cobra.Command{
		Use:   "entropy --in ANSWERS.(jsonl|parquet) [flags]",
		Short: "Kernel entropy of sampled LLM answers per prompt, with AUROC",
		Long: `entropy scores each prompt's uncertainty as the predictive kernel entropy of
its sampled answers (seed 000, Algorithm 1), beside the lexical-similarity
baseline, and reports how well both detect incorrect answers (AUROC).

Input rows (JSONL or Parquet): id, samples (strings), optional embeddings (one
vector per sample), answer, reference (string or list), correct (bool).
The cs kernel works on word tokens and needs no embeddings (--t and
--cumulative apply to it only); the vector kernels need embeddings in the rows
or --embeddings E.npy (rows x samples x d; --embeddings-key picks the array
of an .npz), and --gamma applies to them only. A row with no samples is
skipped with a reason whatever the kernel.

Correctness is 'correct' when given, else RougeL-F(answer, any reference) >
--threshold (default 0.3; 0 counts an answer sharing any word with a
reference as correct).
With --holdout-first the answer under test is samples[0] and uncertainty is
computed from samples[1:] only.`,
		Example: `  genlens entropy --in answers.jsonl --holdout-first
  genlens entropy --in answers.jsonl --kernel rbf --gamma dim --embeddings e5.npy --json`,
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error { return runEntropy(cmd, f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.in, "in", "", "answers file (.jsonl or .parquet)")
	fl.StringVar(&f.embeddings, "embeddings", "", "optional .npy/.npz with a (rows, samples, d) array of sample embeddings")
	fl.StringVar(&f.embeddingsKey, "embeddings-key", "", "array name inside an --embeddings .npz")
	fl.StringVar(&f.kernel, "kernel", "cs", "cs (word sequences) or a vector kernel: "+strings.Join(kernel.Names, ", "))
	fl.IntVar(&f.t, "t", 2, "subsequence length of the cs kernel")
	fl.BoolVar(&f.cumulative, "cumulative", false, "cs kernel: sum subsequence lengths 1..t (the authors' code)")
	fl.StringVar(&f.gamma, "gamma", "dim", "bandwidth of rbf/laplacian/poly: dim (1/d), median, or a number")
	fl.BoolVar(&f.holdoutFirst, "holdout-first", false, "judge samples[0]; score uncertainty on samples[1:]")
	fl.Float64Var(&f.threshold, "threshold", uncertainty.DefaultRougeThreshold, "RougeL-F above which an answer is correct, in [0, 1)")
	fl.BoolVar(&f.json, "json", false, "print one JSON document")
	fl.StringVar(&f.out, "out", "", "directory for items.csv, summary.json and charts")
	return cmd
}

// entropyItem and entropyOutput are the JSON contract of `genlens entropy`.
type entropyItem struct {
	ID                string `json:"id"`
	KernelEntropy     num    `json:"kernel_entropy"`
	LexicalSimilarity num    `json:"lexical_similarity"`
	Correct           *bool  `json:"correct"`
	Reason            string `json:"reason,omitempty"`
}

type entropyOutput struct {
	Items   []entropyItem `json:"items"`
	Summary struct {
		N        int `json:"n"`
		Skipped  int `json:"skipped"`
		Labelled int `json:"labelled"`
		Accuracy num `json:"accuracy"`
		AUROC    struct {
			KernelEntropy     num `json:"kernel_entropy"`
			LexicalSimilarity num `json:"lexical_similarity"`
		} `json:"auroc"`
		Kernel string `json:"kernel"`
	} `json:"summary"`
}

func runEntropy(cmd *cobra.Command, f entropyFlags) error {
	if f.in == "" {
		return badUsage("entropy: --in FILE is required (see 'genlens entropy --help')")
	}
	if err := guardOut(f.out, entropyOutputs, f.in, f.embeddings); err != nil {
		return err
	}
	if f.t < 1 {
		return badUsage("--t %d: want a positive subsequence length", f.t)
	}
	if !(f.threshold >= 0 && f.threshold < 1) {
		return badUsage("--threshold %v: want a value in [0, 1)", f.threshold)
	}
	vector := f.kernel != "cs"
	if vector && !slices.Contains(kernel.Names, f.kernel) {
		return badUsage("--kernel %q: want cs, %s", f.kernel, strings.Join(kernel.Names, ", "))
	}
	if err := checkKernelFlags(cmd, f.kernel, vector); err != nil {
		return err
	}
	if f.embeddingsKey != "" && f.embeddings == "" {
		return badUsage("--embeddings-key %s: give the .npz with --embeddings", f.embeddingsKey)
	}
	bw, err := kernel.ParseBandwidth(f.gamma)
	if err != nil {
		return usageError{err}
	}
	recs, err := dataio.ReadRecords(f.in)
	if err != nil {
		return err
	}
	prompts := make([]uncertainty.Prompt, len(recs))
	for i, r := range recs {
		prompts[i] = uncertainty.Prompt{ID: r.ID, Samples: r.Samples, Answer: r.Answer, References: r.Reference, Correct: r.Correct}
	}
	// RougeThresholdSet: --threshold 0 means 0, not the package default.
	opt := uncertainty.Options{Sequence: kernel.CS{T: f.t, Cumulative: f.cumulative}, HoldoutFirst: f.holdoutFirst,
		RougeThreshold: f.threshold, RougeThresholdSet: true}
	if vector {
		if err := attachEmbeddings(prompts, recs, f); err != nil {
			return err
		}
		if opt.Kernel, err = newKernel(f.kernel, bw, poolRows(prompts, f.holdoutFirst, 2000)); err != nil {
			return err
		}
	}
	tick, done := progress(cmd.ErrOrStderr(), len(prompts), "entropy")
	opt.Progress = tick
	results, sum, err := uncertainty.Evaluate(prompts, opt)
	done()
	if err != nil {
		return err
	}
	for i := range results {
		// A zero entropy (every pair at k = 0) is computed as -0.
		results[i].KernelEntropy = zeroSign(results[i].KernelEntropy)
		results[i].LexicalSimilarity = zeroSign(results[i].LexicalSimilarity)
	}
	var out entropyOutput
	for _, r := range results {
		out.Items = append(out.Items, entropyItem{ID: r.ID, KernelEntropy: num(r.KernelEntropy), LexicalSimilarity: num(r.LexicalSimilarity), Correct: r.Correct, Reason: r.Reason})
	}
	s := &out.Summary
	s.N, s.Skipped, s.Labelled, s.Accuracy = sum.N, sum.Skipped, sum.Labelled, num(sum.Accuracy)
	s.AUROC.KernelEntropy, s.AUROC.LexicalSimilarity = num(sum.AUROCKernelEntropy), num(sum.AUROCLexicalSimilarity)
	s.Kernel = opt.Sequence.String()
	if opt.Kernel != nil {
		s.Kernel = opt.Kernel.String()
	}
	if err := writeEntropyArtifacts(f.out, results, &out); err != nil {
		return err
	}
	if f.json {
		return writeJSON(cmd.OutOrStdout(), out)
	}
	printEntropy(cmd.OutOrStdout(), &out)
	return nil
}

// checkKernelFlags refuses flags given explicitly that the chosen kernel
// would ignore: --t and --cumulative belong to cs, --embeddings and
// --embeddings-key to the vector kernels, --gamma to rbf, laplacian, poly
// (not cs, cosine, linear).
func checkKernelFlags(cmd *cobra.Command, name string, vector bool) error {
	type rule struct{ flag, appliesTo string }
	rules := []rule{{"t", "the cs kernel"}, {"cumulative", "the cs kernel"}}
	if !vector {
		vk := "the vector kernels (" + strings.Join(kernel.Names, ", ") + ")"
		rules = []rule{{"gamma", "the rbf, laplacian and poly kernels"}, {"embeddings", vk}, {"embeddings-key", vk}}
	}
	for _, r := range rules {
		if cmd.Flags().Changed(r.flag) {
			return badUsage("--%s applies only to %s, not --kernel %s (see 'genlens entropy --help')", r.flag, r.appliesTo, name)
		}
	}
	if vector {
		return gammaApplies(cmd, name)
	}
	return nil
}

// zeroSign returns v with -0 made +0, so a zero score never prints as -0.
func zeroSign(v float64) float64 {
	if v == 0 {
		return 0
	}
	return v
}

// attachEmbeddings sets each prompt's embedding rows from the records or
// from --embeddings, and rejects rows a vector kernel cannot score. A row
// with no samples gets no embeddings: it is skipped with a reason, as with
// the cs kernel.
func attachEmbeddings(prompts []uncertainty.Prompt, recs []dataio.Record, f entropyFlags) error {
	if f.embeddings != "" {
		arr, err := dataio.ReadArray(f.embeddings, dataio.ReadOptions{Key: f.embeddingsKey})
		if err != nil {
			return err
		}
		if arr.Rank() != 3 {
			return &dataio.InputError{File: f.embeddings, Msg: fmt.Sprintf("want a 3-D array (rows, samples, d), got shape %v", arr.Shape)}
		}
		if arr.Shape[0] != len(recs) {
			return &dataio.InputError{File: f.embeddings, Msg: fmt.Sprintf("%d rows of embeddings for %d rows in %s", arr.Shape[0], len(recs), f.in)}
		}
		for i, r := range recs {
			if len(r.Samples) == 0 {
				continue
			}
			if len(r.Samples) != arr.Shape[1] {
				return &dataio.InputError{File: f.in, Line: r.Line, Field: "samples", Msg: fmt.Sprintf("%d samples, but %s has %d per row", len(r.Samples), f.embeddings, arr.Shape[1])}
			}
			sub := arr.Slice(i)
			prompts[i].Embeddings = mat.NewDense(arr.Shape[1], arr.Shape[2], sub.Data)
		}
		return nil
	}
	d := -1
	for i, r := range recs {
		if len(r.Samples) == 0 && len(r.Embeddings) == 0 {
			continue
		}
		if len(r.Embeddings) == 0 {
			return &dataio.InputError{File: f.in, Line: r.Line, Field: "embeddings", Msg: fmt.Sprintf("missing; --kernel %s needs one embedding per sample (or give --embeddings E.npy)", f.kernel)}
		}
		if len(r.Embeddings) != len(r.Samples) {
			return &dataio.InputError{File: f.in, Line: r.Line, Field: "embeddings", Msg: fmt.Sprintf("%d embeddings for %d samples", len(r.Embeddings), len(r.Samples))}
		}
		if d < 0 {
			d = len(r.Embeddings[0])
		}
		m := mat.NewDense(len(r.Embeddings), d, nil)
		for j, v := range r.Embeddings {
			if len(v) != d {
				return &dataio.InputError{File: f.in, Line: r.Line, Field: fmt.Sprintf("embeddings[%d]", j), Msg: fmt.Sprintf("has %d values, earlier rows have %d", len(v), d)}
			}
			m.SetRow(j, v)
		}
		prompts[i].Embeddings = m
	}
	return nil
}

// poolRows gathers up to limit embedding rows, evenly spaced over all
// prompts, for the bandwidth rules (the median over all pairs of all
// samples would be quadratic in the data set).
func poolRows(prompts []uncertainty.Prompt, holdoutFirst bool, limit int) *mat.Dense {
	var rows [][]float64
	for _, p := range prompts {
		if p.Embeddings == nil {
			continue
		}
		n, _ := p.Embeddings.Dims()
		for j := 0; j < n; j++ {
			if holdoutFirst && j == 0 {
				continue
			}
			rows = append(rows, p.Embeddings.RawRowView(j))
		}
	}
	if len(rows) == 0 {
		return nil
	}
	step := max(1, (len(rows)+limit-1)/limit)
	d := len(rows[0])
	var data []float64
	for i := 0; i < len(rows); i += step {
		data = append(data, rows[i]...)
	}
	return mat.NewDense(len(data)/d, d, data)
}

func printEntropy(w io.Writer, out *entropyOutput) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	const maxRows = 40
	if len(out.Items) <= maxRows {
		fmt.Fprintln(tw, "id\tkernel_entropy\tlexical_similarity\tcorrect\t")
		for _, it := range out.Items {
			c := "-"
			if it.Correct != nil {
				c = strconv.FormatBool(*it.Correct)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", it.ID, fmtNum(float64(it.KernelEntropy)), fmtNum(float64(it.LexicalSimilarity)), c, it.Reason)
		}
		tw.Flush()
		fmt.Fprintln(w)
	}
	s := out.Summary
	fmt.Fprintf(w, "prompts %d (skipped %d, labelled %d), kernel %s\n", s.N, s.Skipped, s.Labelled, s.Kernel)
	fmt.Fprintf(w, "accuracy of the answers under test: %s\n", fmtNum(float64(s.Accuracy)))
	fmt.Fprintf(w, "AUROC for detecting incorrect answers:\n  kernel entropy      %s\n  lexical similarity  %s\n",
		fmtNum(float64(s.AUROC.KernelEntropy)), fmtNum(float64(s.AUROC.LexicalSimilarity)))
	if len(out.Items) > maxRows {
		fmt.Fprintf(w, "(%d per-prompt scores: use --json or --out DIR)\n", len(out.Items))
	}
}

// entropyOutputs are the files 'entropy --out' writes.
var entropyOutputs = []string{"items.csv", "entropy.json", "kernel_entropy_by_correctness.png"}

func writeEntropyArtifacts(dir string, results []uncertainty.Result, out *entropyOutput) error {
	if dir == "" {
		return nil
	}
	if err := prepareOut(dir); err != nil {
		return err
	}
	rows := make([][]string, len(results))
	byClass := map[string][]float64{}
	cell := func(v float64) string {
		if math.IsNaN(v) {
			return ""
		}
		return strconv.FormatFloat(v, 'g', -1, 64)
	}
	for i, r := range results {
		c := ""
		if r.Correct != nil {
			c = strconv.FormatBool(*r.Correct)
			if !math.IsNaN(r.KernelEntropy) {
				name := "incorrect"
				if *r.Correct {
					name = "correct"
				}
				byClass[name] = append(byClass[name], r.KernelEntropy)
			}
		}
		rows[i] = []string{r.ID, cell(r.KernelEntropy), cell(r.LexicalSimilarity), c, r.Reason}
	}
	if err := dataio.WriteTable(outPath(dir, "items.csv"), []string{"id", "kernel_entropy", "lexical_similarity", "correct", "reason"}, rows); err != nil {
		return err
	}
	if err := dataio.WriteJSON(outPath(dir, "entropy.json"), out); err != nil {
		return err
	}
	if len(byClass) > 0 {
		if err := chart.Histograms(outPath(dir, "kernel_entropy_by_correctness.png"), "Kernel entropy by correctness", "kernel entropy", byClass, 30); err != nil {
			return err
		}
	}
	return nil
}
