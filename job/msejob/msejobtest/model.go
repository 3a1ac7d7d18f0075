package msejobtest

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"testing/fstest"

	"github.com/genlens/genlens/job"
	"github.com/genlens/genlens/job/msejob"
)

// CheckModel fits the check model (with its drift model) of a toy
// deployment of one feature x, as `genlens mse fit` writes it.
func CheckModel(t testing.TB) []byte {
	t.Helper()
	r := rand.New(rand.NewPCG(1, 7))
	var b bytes.Buffer
	b.WriteString("x,pred,y\n")
	for range 300 {
		x := r.NormFloat64()
		u := (3*x + 5) * math.Sin(3*x+5)
		fmt.Fprintf(&b, "%v,%v,%v\n", x, u+0.5*x, u+0.3*r.NormFloat64())
	}
	req := msejob.NewFitRequest()
	req.Train, req.Target, req.Prediction, req.Features, req.Model = "ref.csv", "y", "pred", []string{"x"}, "check.json"
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
