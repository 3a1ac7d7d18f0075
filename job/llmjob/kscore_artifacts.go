package llmjob

import (
	"encoding/csv"
	"io"
	"math"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/genlens/genlens/dataio"
	"github.com/genlens/genlens/internal/format/jsonnum"
	"github.com/genlens/genlens/internal/report/chart"
	"github.com/genlens/genlens/job"
)

// Artifacts returns the files of `entropy --out`: items.csv (one row per
// prompt, a column per score asked for, undefined scores as empty cells),
// entropy.json, and kernel_entropy_by_correctness.png when kernel entropy
// was asked for and some scored prompt is labelled.
func (r *EntropyResult) Artifacts() []job.Artifact {
	arts := []job.Artifact{{Name: "items.csv", Write: r.writeCSV}, kscoreJSON("entropy.json", r)}
	if byClass := r.entropyByCorrectness(); len(byClass) > 0 {
		arts = append(arts, job.Artifact{Name: "kernel_entropy_by_correctness.png", Write: func(w io.Writer) error {
			return job.PNGTo(w)(chart.NewHistograms("Kernel entropy by correctness", "kernel entropy", byClass, 30))
		}})
	}
	if len(r.curves) > 0 {
		arts = append(arts, job.Artifact{Name: "accuracy_rejection.png", Write: func(w io.Writer) error {
			series := make([]chart.Series, len(r.curves))
			for i, c := range r.curves {
				series[i] = chart.Series{Name: c.label, X: c.rejected, Y: c.accuracy}
			}
			return job.PNGTo(w)(chart.NewLines("Accuracy of the answers kept", "rejection rate (most uncertain first)", "accuracy", series))
		}})
	}
	return arts
}

func (r *EntropyResult) writeCSV(w io.Writer) error {
	scores := r.Scores()
	cw := csv.NewWriter(w)
	header := append([]string{"id"}, scores...)
	if err := cw.Write(append(header, "correct", "reason")); err != nil {
		return err
	}
	for _, it := range r.Items {
		c := ""
		if it.Correct != nil {
			c = strconv.FormatBool(*it.Correct)
		}
		row := []string{it.ID}
		for _, s := range scores {
			row = append(row, job.CSVNum(numOr(it.Score(s))))
		}
		if err := cw.Write(append(row, c, it.Reason)); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// numOr returns *n, NaN for nil.
func numOr(n *jsonnum.Num) jsonnum.Num {
	if n == nil {
		return jsonnum.Num(math.NaN())
	}
	return *n
}

// entropyByCorrectness groups the defined kernel entropies of labelled
// prompts into "correct" and "incorrect".
func (r *EntropyResult) entropyByCorrectness() map[string][]float64 {
	byClass := map[string][]float64{}
	for _, it := range r.Items {
		v := float64(numOr(it.Score("kernel_entropy")))
		if it.Correct == nil || math.IsNaN(v) {
			continue
		}
		name := "incorrect"
		if *it.Correct {
			name = "correct"
		}
		byClass[name] = append(byClass[name], v)
	}
	return byClass
}

// Artifacts returns the files of `correlate --out`: correlation.png (a
// heatmap, files named without directory and extension), covariance.csv,
// correlation.csv (one column per file, NaN where undefined) and
// correlate.json.
func (r *CorrelateResult) Artifacts() []job.Artifact {
	labels := make([]string, len(r.Files))
	for e, p := range r.Files {
		labels[e] = strings.TrimSuffix(filepath.Base(p), filepath.Ext(p))
	}
	matrix := func(name string, m [][]jsonnum.Num) job.Artifact {
		return job.Artifact{Name: name, Write: func(w io.Writer) error {
			return dataio.EncodeCSV(w, labels, kscoreFloats(m))
		}}
	}
	return []job.Artifact{
		{Name: "correlation.png", Write: func(w io.Writer) error {
			return job.PNGTo(w)(chart.NewHeatmap("Distributional correlation", kscoreFloats(r.Correlation), labels, -1, 1))
		}},
		matrix("covariance.csv", r.Covariance),
		matrix("correlation.csv", r.Correlation),
		kscoreJSON("correlate.json", r),
	}
}

// kscoreFloats converts a matrix of Nums back to float64 (NaN stays NaN).
func kscoreFloats(m [][]jsonnum.Num) [][]float64 {
	out := make([][]float64, len(m))
	for i, row := range m {
		out[i] = make([]float64, len(row))
		for j, v := range row {
			out[i][j] = float64(v)
		}
	}
	return out
}

// kscoreJSON is the result document v as a file: indented, with a
// trailing newline, as --json prints it.
func kscoreJSON(name string, v any) job.Artifact {
	return job.Artifact{Name: name, Write: func(w io.Writer) error { return dataio.EncodeJSON(w, v) }}
}
