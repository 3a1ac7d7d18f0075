package job

import (
	"io"
	"math"
	"strconv"

	"github.com/genlens/genlens/internal/format/jsonnum"
	"github.com/genlens/genlens/internal/report/chart"
)

// Artifact is one file a job can produce beside its JSON result: a CSV
// table, a PNG chart, an NPY array. Write renders it from the result, so
// the command line writes it under --out (atomically) and the service
// stores it; nothing is computed twice.
type Artifact struct {
	Name  string // file name, e.g. "regret.png"
	Write func(w io.Writer) error
}

// PNGTo returns a function that encodes a figure (given with the error of
// its constructor, chart.NewX) as PNG to w.
func PNGTo(w io.Writer) func(*chart.Figure, error) error {
	return func(fig *chart.Figure, err error) error {
		if err != nil {
			return err
		}
		return fig.Encode(w, chart.PNG)
	}
}

// CSVNum writes a number in the shortest form that parses back, and an
// undefined one as an empty cell.
func CSVNum(v jsonnum.Num) string {
	if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
		return ""
	}
	return strconv.FormatFloat(float64(v), 'g', -1, 64)
}
