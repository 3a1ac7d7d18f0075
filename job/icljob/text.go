package icljob

import (
	"fmt"
	"io"
	"math"
	"text/tabwriter"

	"github.com/genlens/genlens/job"
)

var num = job.FormatNum

func simulateText(w io.Writer, _ *HallucinationSimulateRequest, res *HallucinationSimulateResult) {
	s := res.Settings
	fmt.Fprintf(w, "model %v", s.Model)
	if s.Model == "linear" {
		fmt.Fprintf(w, ", features %v, noise %v, prior_scale %v", s.Features, s.Noise, s.PriorScale)
	} else {
		fmt.Fprintf(w, ", groups %v, labels %v, alpha %v", s.Groups, s.Labels, s.Alpha)
	}
	fmt.Fprintf(w, "; %v tasks per n; eps %v, M %v, K %v, N-n %v\n\n", s.Tasks, s.Eps, s.M, s.K, s.Extra)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "n\tPHR (Alg. 1)\texact PHR\tTHR\tMAE vs exact\tMAE vs THR\tR² vs THR\t")
	for _, r := range res.Rows {
		r2 := "-"
		if v := float64(r.R2PHRTHR); !math.IsNaN(v) {
			r2 = fmt.Sprintf("%.3f", v)
		}
		fmt.Fprintf(tw, "%d\t%.4f\t%.4f\t%.4f\t%.4f\t%.4f\t%s\t\n", r.N, float64(r.PHRMean), float64(r.ExactPHRMean), float64(r.THRMean),
			float64(r.MAEPHRExact), float64(r.MAEPHRTHR), r2)
	}
	tw.Flush()
}

func runText(w io.Writer, _ *HallucinationRunRequest, res *HallucinationRunResult) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	exact := len(res.Items) > 0 && res.Items[0].ExactPHR != nil
	header := "id\tphr\t± se\ttotal\taleatoric\tepistemic\terror_rate\t"
	if exact {
		header += "exact_phr\t"
	}
	fmt.Fprintln(tw, header)
	for _, it := range res.Items {
		if it.Error != "" {
			fmt.Fprintf(tw, "%s\tfailed: %s\t\n", it.ID, it.Error)
			continue
		}
		fmt.Fprintf(tw, "%s\t%.4f\t%.4f\t%s\t%s\t%s\t%s\t", it.ID, float64(it.PHR), float64(it.PHRStdErr), num(float64(it.Total)),
			num(float64(it.Aleatoric)), num(float64(it.Epistemic)), num(float64(it.ErrorRate)))
		if exact {
			fmt.Fprintf(tw, "%.4f\t", float64(*it.ExactPHR))
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
	s := res.Settings
	fmt.Fprintf(w, "\nbackend %v; eps %v, M %v, K %v, N-n %v; %v context examples\n", s.Backend, s.Eps, s.M, s.K, s.Extra, s.ContextExamples)
	if st := res.Stats; st != nil {
		fmt.Fprintf(w, "%d requests (%d retries) in %.1f s: %.1f requests/s\n", st.Requests, st.Retries, st.Seconds, st.RequestsPerSec)
	}
}
