package main

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/genlens/genlens/internal/testkit/shareddata"
	"github.com/genlens/genlens/metric/disentangle"
)

func TestCKACommand(t *testing.T) {
	dir := t.TempDir()
	r := rand.New(rand.NewPCG(5, 5))
	x := make([]float64, 30*4)
	for i := range x {
		x[i] = r.NormFloat64()
	}
	y := make([]float64, 30*2)
	for i := 0; i < 30; i++ {
		y[2*i], y[2*i+1] = x[4*i]+0.5*r.NormFloat64(), r.NormFloat64()
	}
	xp := writeArray(t, dir, "x.npy", []int{30, 4}, x)
	yp := writeArray(t, dir, "y.npy", []int{30, 2}, y)
	xm, ym := mat.NewDense(30, 4, x), mat.NewDense(30, 2, y)
	lin := func(m *mat.Dense) *mat.SymDense { var s mat.SymDense; s.SymOuterK(1, m); return &s }
	wantLin, _ := disentangle.CKA(lin(xm), lin(ym))
	wantDeb, _ := disentangle.CKAUnbiased(lin(xm), lin(ym))
	kx, _ := disentangle.KornblithRBF(xm, 0.8)
	ky, _ := disentangle.KornblithRBF(ym, 0.8)
	wantRBF, _ := disentangle.CKA(kx.Gram(xm), ky.Gram(ym))
	for _, tc := range []struct {
		args []string
		want float64
	}{
		{nil, wantLin},
		{[]string{"--debiased"}, wantDeb},
		{[]string{"--kernel", "rbf", "--threshold", "0.8"}, wantRBF},
	} {
		code, stdout, stderr := cli(t, append([]string{"cka", "--x", xp, "--y", yp, "--json"}, tc.args...)...)
		var out map[string]float64
		if code != 0 || json.Unmarshal([]byte(stdout), &out) != nil || len(out) != 1 || math.Abs(out["cka"]-tc.want) > 1e-12 {
			t.Errorf("cka %v: exit %d, %s %s; want {\"cka\": %v}", tc.args, code, stdout, stderr, tc.want)
		}
	}
	code, text, _ := cli(t, "cka", "--x", xp, "--y", yp)
	if code != 0 || !strings.Contains(text, "CKA (linear kernel, 30 examples): ") {
		t.Errorf("text: %q", text)
	}
	// A constant representation has no CKA: null.
	cp := writeArray(t, dir, "c.npy", []int{30, 2}, make([]float64, 60))
	if code, stdout, _ := cli(t, "cka", "--x", xp, "--y", cp, "--json"); code != 0 || !strings.Contains(stdout, `"cka": null`) {
		t.Errorf("constant: exit %d %s", code, stdout)
	}
	short := writeArray(t, dir, "s.npy", []int{29, 2}, y[:58])
	tiny := writeArray(t, dir, "t.npy", []int{3, 2}, y[:6])
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--x", xp, "--y", short}, "s.npy: 29 rows, but"},
		{[]string{"--x", tiny, "--y", tiny, "--debiased"}, "at least 4"},
		{[]string{"--x", xp, "--y", yp, "--kernel", "poly"}, "--kernel"},
		{[]string{"--x", xp, "--y", yp, "--kernel", "rbf", "--threshold", "0"}, "--threshold"},
		{[]string{"--x", xp}, "--x and --y are required"},
		{[]string{"--x", xp, "--y", cp, "--kernel", "rbf"}, "c.npy: median squared distance"},
	} {
		code, _, stderr := cli(t, append([]string{"cka"}, tc.args...)...)
		if code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("cka %v: exit %d, stderr %q; want exit 2 with %q", tc.args, code, stderr, tc.want)
		}
	}
}

func TestCKAKornblithFixtures(t *testing.T) {
	xp := shareddata.Path(t, "fixtures/kornblith_X.csv")
	yp := shareddata.Path(t, "fixtures/kornblith_Y.csv")
	b, err := os.ReadFile(shareddata.Path(t, "fixtures/kornblith_expected.json"))
	if err != nil {
		t.Fatal(err)
	}
	var want map[string]float64
	json.Unmarshal(b, &want)
	for key, args := range map[string][]string{
		"linear":          nil,
		"rbf_half_median": {"--kernel", "rbf", "--threshold", "0.5"},
		"linear_debiased": {"--debiased"},
	} {
		code, stdout, stderr := cli(t, append([]string{"cka", "--x", xp, "--y", yp, "--json"}, args...)...)
		var out struct{ CKA float64 }
		if code != 0 || json.Unmarshal([]byte(stdout), &out) != nil || math.Abs(out.CKA-want[key]) > 1e-9 {
			t.Errorf("%s: exit %d %s %s; want %.10f", key, code, stdout, stderr, want[key])
		}
	}
}
