package job

import "testing"

func TestFormatRate(t *testing.T) {
	for _, c := range []struct {
		v    float64
		want string
	}{
		{1214.7, "1210"},
		{1210, "1210"},
		{22540.8, "22500"},
		{99.96, "100"},
		{99.94, "99.9"},
		{3.14159, "3.14"},
		{0.012345, "0.0123"},
		{1, "1.00"},
		{0, "0"},
	} {
		if got := FormatRate(c.v); got != c.want {
			t.Errorf("FormatRate(%v) = %q, want %q", c.v, got, c.want)
		}
	}
}
