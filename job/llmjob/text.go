package llmjob

import (
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strconv"
	"text/tabwriter"

	"github.com/genlens/genlens/internal/format/jsonnum"
	"github.com/genlens/genlens/job"
)

var num = job.FormatNum

func correlateText(w io.Writer, _ *CorrelateRequest, c *CorrelateResult) {
	fmt.Fprintf(w, "%d files x %d members, kernel %s\n\n", len(c.Files), c.Members, c.Kernel)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "file\tvariance\tensemble gain\t")
	for e := range c.Files {
		fmt.Fprintf(tw, "corr %d\t", e)
	}
	fmt.Fprintln(tw)
	for e, p := range c.Files {
		fmt.Fprintf(tw, "%s\t%s\t%s\t", filepath.Base(p), num(float64(c.Variance[e])), num(float64(c.EnsembleGain[e])))
		for _, v := range c.Correlation[e] {
			fmt.Fprintf(tw, "%.3f\t", float64(v))
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
}

func decomposeText(w io.Writer, _ *DecomposeRequest, d *DecomposeResult) {
	fmt.Fprintf(w, "%d models x %d samples", d.NModels, d.SamplesPerModel)
	if d.Instances > 0 {
		fmt.Fprintf(w, " x %d instances (terms averaged over instances)", d.Instances)
	}
	fmt.Fprintf(w, ", kernel %s\n\n", d.Kernel)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, r := range []struct {
		name string
		v    jsonnum.Num
		note string
	}{
		{"kernel score", d.KernelScore, "expected score of one model against the targets (lower is better)"},
		{"  noise", d.Noise, "-||Q||², irreducible"},
		{"  bias", d.Bias, "||E[P] - Q||²"},
		{"  variance", d.Variance, "distributional variance, Eq. 9"},
		{"identity gap", d.IdentityGap, "score - noise - bias - variance (rounding only)"},
		{"MMD²", d.MMD2, "mean over models, unbiased"},
		{"kernel entropy", d.KernelEntropy, "mean over models"},
		{"ensemble gain", d.EnsembleGain, fmt.Sprintf("predicted score reduction of averaging the %d models", d.NModels)},
	} {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", r.name, num(float64(r.v)), r.note)
	}
	tw.Flush()
	for _, m := range d.Warnings {
		fmt.Fprintf(w, "note: %s\n", m)
	}
}

func sampleText(w io.Writer, _ *SampleRequest, r *SampleResult) {
	fmt.Fprintf(w, "prompts %d: sampled %d, skipped %d already in %s\n", r.Prompts, r.Sampled, r.Skipped, r.Out)
	fmt.Fprintf(w, "answers %d from %d requests (%d retries)\n", r.Samples, r.Requests, r.Retries)
	if len(r.Failed) > 0 {
		fmt.Fprintf(w, "failed %d prompts the server refused (first: %q, line %d: %s); the others are sampled\n", len(r.Failed), r.Failed[0].ID, r.Failed[0].Line, r.Failed[0].Error)
	}
	fmt.Fprintf(w, "tokens %d prompt, %d completion; %s prompts/s, %s tokens/s in %.1fs\n",
		r.Tokens.PromptTokens, r.Tokens.CompletionTokens, job.FormatRate(float64(r.PromptsPerSecond)), job.FormatRate(float64(r.TokensPerSecond)), float64(r.Seconds))
}

// entropyText prints the table of a result: every prompt's scores when
// they fit on a screen, the summary and the AUROC of each score.
func entropyText(w io.Writer, _ *EntropyRequest, out *EntropyResult) {
	scores := out.Scores()
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	const maxRows = 40
	if len(out.Items) <= maxRows {
		fmt.Fprint(tw, "id\t")
		for _, s := range scores {
			fmt.Fprintf(tw, "%s\t", s)
		}
		fmt.Fprintln(tw, "correct\t")
		for _, it := range out.Items {
			c := "-"
			if it.Correct != nil {
				c = strconv.FormatBool(*it.Correct)
			}
			fmt.Fprintf(tw, "%s\t", it.ID)
			for _, s := range scores {
				fmt.Fprintf(tw, "%s\t", num(numValue(it.Score(s))))
			}
			fmt.Fprintf(tw, "%s\t%s\n", c, it.Reason)
		}
		tw.Flush()
		fmt.Fprintln(w)
	}
	s := out.Summary
	fmt.Fprintf(w, "prompts %d (skipped %d, labelled %d)", s.N, s.Skipped, s.Labelled)
	if s.Kernel != "" {
		fmt.Fprintf(w, ", kernel %s", s.Kernel)
	}
	if s.Similarity != "" {
		fmt.Fprintf(w, ", similarity %s", s.Similarity)
	}
	if s.KLET != nil {
		fmt.Fprintf(w, ", kle t %s", num(float64(*s.KLET)))
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "accuracy of the answers under test: %s\n", num(float64(s.Accuracy)))
	if s.AUARC == nil {
		fmt.Fprintln(w, "AUROC for detecting incorrect answers:")
		for _, sc := range scores {
			fmt.Fprintf(w, "  %-20s%s\n", scoreByKey(sc).label, num(numValue(s.AUROC[sc])))
		}
	} else {
		fmt.Fprintln(w, "AUROC for detecting incorrect answers, AUARC (area under the accuracy-rejection curve):")
		fmt.Fprintf(w, "  %-20s%-10s%s\n", "score", "AUROC", "AUARC")
		for _, sc := range scores {
			fmt.Fprintf(w, "  %-20s%-10s%s\n", scoreByKey(sc).label, num(numValue(s.AUROC[sc])), num(numValue(s.AUARC[sc])))
		}
	}
	if len(out.Items) > maxRows {
		if out.OutDir != "" {
			fmt.Fprintf(w, "(%d per-prompt scores in %s)\n", len(out.Items), filepath.Join(out.OutDir, "items.csv"))
		} else {
			fmt.Fprintf(w, "(%d per-prompt scores: in the JSON output, or in items.csv of an output directory)\n", len(out.Items))
		}
	}
	// out.Warnings are not part of the table: transports show them where
	// they show every warning (the CLI on stderr, the service in the job).
}

// numValue returns *n as a float64, NaN (printed "-") for nil.
func numValue(n *jsonnum.Num) float64 {
	if n == nil {
		return math.NaN()
	}
	return float64(*n)
}
