package job

import (
	"math"
	"strconv"

	"github.com/genlens/genlens/jsonnum"
)

// Num is a float64 that marshals NaN and ±Inf as JSON null (package
// jsonnum, below the job layer, so that the service's monitors share it).
type Num = jsonnum.Num

// Nums converts a slice of float64 to Nums.
func Nums(v []float64) []Num { return jsonnum.Nums(v) }

// FormatNum formats v for a table a reader reads: six significant
// digits, "-" for NaN (an undefined estimate), -0 as 0.
func FormatNum(v float64) string {
	if math.IsNaN(v) {
		return "-"
	}
	return strconv.FormatFloat(v+0, 'g', 6, 64)
}
