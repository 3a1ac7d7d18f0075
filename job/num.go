package job

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

// Nums converts a slice of float64 to Nums.
func Nums(v []float64) []Num {
	out := make([]Num, len(v))
	for i, x := range v {
		out[i] = Num(x)
	}
	return out
}
