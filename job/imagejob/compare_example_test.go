package imagejob_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing/fstest"

	"gonum.org/v1/gonum/mat"

	"github.com/genlens/genlens/internal/format/jsonnum"
	"github.com/genlens/genlens/job"
	"github.com/genlens/genlens/job/imagejob"
	"github.com/genlens/genlens/metric/frechet"
)

// Two statistics files, as pytorch-fid's --save-stats writes them, compared
// the way `python -m pytorch_fid a.npz b.npz` compares them: means 0 and 1
// in each of 4 coordinates, identity covariances, so FID = ||μ₁ - μ₂||² = 4.
// Inputs come from any fs.FS; here an in-memory one.
func ExampleCompare() {
	stats := func(mu float64) []byte {
		s := frechet.Stats{Mu: []float64{mu, mu, mu, mu}, Sigma: mat.NewSymDense(4, []float64{
			1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1})}
		dir, _ := os.MkdirTemp("", "example")
		defer os.RemoveAll(dir)
		path := filepath.Join(dir, "stats.npz")
		if err := frechet.WriteStats(path, s); err != nil {
			panic(err)
		}
		b, _ := os.ReadFile(path)
		return b
	}
	env := job.Env{FS: fstest.MapFS{"a.npz": {Data: stats(0)}, "b.npz": {Data: stats(1)}}}
	req := imagejob.NewCompareRequest()
	req.Real, req.Fake = "a.npz", "b.npz"
	res, err := imagejob.Compare(context.Background(), env, req)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("FID", *res.FID, "n_real", res.NReal)
	// Output: FID 4 n_real <nil>
}

// A result's numbers print as numbers: a *Num prints its value, a
// ScoreMeanStd its mean ± std.
func ExampleNum() {
	fid := jsonnum.Num(12.5)
	res := imagejob.CompareResult{FID: &fid, KID: &imagejob.ScoreMeanStd{Mean: 0.012, Std: 0.003}}
	fmt.Println("FID", res.FID, "KID", res.KID)
	fmt.Printf("%v %.2f\n", *res.FID, *res.FID)
	// Output:
	// FID 12.5 KID 0.012 ± 0.003
	// 12.5 12.50
}
