package job

import (
	"math"
	"strconv"
)

// FormatNum formats v for a table a reader reads: six significant
// digits, "-" for NaN (an undefined estimate), -0 as 0.
func FormatNum(v float64) string {
	if math.IsNaN(v) {
		return "-"
	}
	return strconv.FormatFloat(v+0, 'g', 6, 64)
}
