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

// FormatRate formats a rate (items a second) as people read one: three
// significant digits in fixed notation, never an exponent ("1210", not
// "1.21e+03"; "0.0123").
func FormatRate(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) || v <= 0 {
		return strconv.FormatFloat(v, 'g', 3, 64)
	}
	// Rounded to three significant digits first (1214.7 prints 1210), then
	// as many decimals as the rounded value needs (99.96 prints 100).
	p := math.Pow(10, float64(2-int(math.Floor(math.Log10(v)))))
	r := math.Round(v*p) / p
	decimals := max(0, 2-int(math.Floor(math.Log10(r))))
	return strconv.FormatFloat(r, 'f', decimals, 64)
}
