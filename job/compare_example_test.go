package job_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing/fstest"

	"gonum.org/v1/gonum/mat"

	"genlens/frechet"
	"genlens/job"
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
	req := job.NewCompareRequest()
	req.Real, req.Fake = "a.npz", "b.npz"
	res, err := job.Compare(context.Background(), env, req)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("FID", *res.FID, "n_real", res.NReal)
	// Output: FID 4 n_real <nil>
}
