package msejobtest

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/genlens/genlens/job"
	"github.com/genlens/genlens/job/msejob"
)

// CheckModel fits the check model (with its drift model) of a toy
// deployment of one feature x, as `genlens mse fit` writes it.
func CheckModel(t testing.TB) []byte {
	t.Helper()
	return WideCheckModel(t, 1, nil)
}

// WideCheckModel is CheckModel of a deployment of d features: x and,
// past the first, x1, x2, ... (noise). fit, when not nil, changes the
// request before the fit: a model wanted for what it costs to read
// rather than for its fit takes fewer epochs and no folds.
func WideCheckModel(t testing.TB, d int, fit func(*msejob.FitRequest)) []byte {
	t.Helper()
	r := rand.New(rand.NewPCG(1, 7))
	features := []string{"x"}
	for j := 1; j < d; j++ {
		features = append(features, fmt.Sprint("x", j))
	}
	var b bytes.Buffer
	b.WriteString(strings.Join(features, ",") + ",pred,y\n")
	for range 300 {
		x := r.NormFloat64()
		u := (3*x + 5) * math.Sin(3*x+5)
		fmt.Fprintf(&b, "%v,", x)
		for j := 1; j < d; j++ {
			fmt.Fprintf(&b, "%.4f,", r.NormFloat64())
		}
		fmt.Fprintf(&b, "%v,%v\n", u+0.5*x, u+0.3*r.NormFloat64())
	}
	req := msejob.NewFitRequest()
	req.Train, req.Target, req.Prediction, req.Features, req.Model = "ref.csv", "y", "pred", features, "check.json"
	if fit != nil {
		fit(&req)
	}
	res, err := msejob.Fit(context.Background(), job.Env{FS: fstest.MapFS{"ref.csv": {Data: b.Bytes()}}}, req)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := res.WriteModel(&out); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}
