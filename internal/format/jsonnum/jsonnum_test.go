package jsonnum

import (
	"encoding/json"
	"math"
	"testing"
)

func TestMarshal(t *testing.T) {
	for _, c := range []struct {
		v    float64
		want string
	}{{1.5, "1.5"}, {math.NaN(), "null"}, {math.Inf(1), "null"}, {math.Inf(-1), "null"}, {math.Copysign(0, -1), "0"}, {1e-300, "1e-300"}} {
		b, err := json.Marshal(Num(c.v))
		if err != nil || string(b) != c.want {
			t.Errorf("%v: %s, %v; want %s", c.v, b, err, c.want)
		}
	}
	var n *Num
	if !math.IsNaN(n.Value()) {
		t.Error("nil Value is not NaN")
	}
}
