package jsonnum

import (
	"math"
	"strconv"
)

// Num is a float64 that marshals NaN and ±Inf as JSON null (an undefined
// estimate, such as the variance of one model), since JSON has no NaN,
// and -0 as 0.
type Num float64

// MarshalJSON implements json.Marshaler.
func (n Num) MarshalJSON() ([]byte, error) {
	f := float64(n) + 0
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return []byte("null"), nil
	}
	return strconv.AppendFloat(nil, f, 'g', -1, 64), nil
}

// String formats n as %v formats a float64 ("12.345", "NaN"), so that a
// result's fields print as numbers: fmt.Println(res.FID) prints the
// value, not the address, of the *Num.
func (n Num) String() string { return strconv.FormatFloat(float64(n), 'g', -1, 64) }

// Value returns *n as a float64, NaN for nil (an estimate not made).
func (n *Num) Value() float64 {
	if n == nil {
		return math.NaN()
	}
	return float64(*n)
}

// Nums converts a slice of float64 to Nums.
func Nums(v []float64) []Num {
	out := make([]Num, len(v))
	for i, x := range v {
		out[i] = Num(x)
	}
	return out
}
