package msejob

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"testing/fstest"

	"gonum.org/v1/gonum/mat"

	"github.com/genlens/genlens/dataio"
	"github.com/genlens/genlens/internal/testkit/shareddata"
	"github.com/genlens/genlens/job"
)

// cadataSplit is a protocol on real data: cadata (target in
// units of $100,000), 6,000 random reference rows, a least-squares
// deployed model fitted on them, the other 14,640 rows as production.
// degrade adds 0.5 to the deployed model's predictions in the second half
// of production (a broken model update): those chunks must alert.
func cadataSplit(t testing.TB, degrade bool) fstest.MapFS {
	t.Helper()
	_, a, err := dataio.ReadCSV(shareddata.Path(t, "regression/cadata.csv"))
	if err != nil {
		t.Fatal(err)
	}
	n, d := a.Shape[0], a.Shape[1]-1
	perm := rand.New(rand.NewPCG(1, 14)).Perm(n)
	row := func(i int) []float64 { return a.Data[perm[i]*(d+1) : (perm[i]+1)*(d+1)] }
	const nref = 6000
	// Least squares with an intercept on standardised features.
	mu, sd := make([]float64, d), make([]float64, d)
	for i := 0; i < nref; i++ {
		for j := 0; j < d; j++ {
			mu[j] += row(i)[j+1] / nref
		}
	}
	for i := 0; i < nref; i++ {
		for j := 0; j < d; j++ {
			sd[j] += (row(i)[j+1] - mu[j]) * (row(i)[j+1] - mu[j]) / nref
		}
	}
	design := func(i int) []float64 {
		x := []float64{1}
		for j := 0; j < d; j++ {
			x = append(x, (row(i)[j+1]-mu[j])/math.Sqrt(sd[j]))
		}
		return x
	}
	X := mat.NewDense(nref, d+1, nil)
	y := mat.NewVecDense(nref, nil)
	for i := 0; i < nref; i++ {
		X.SetRow(i, design(i))
		y.SetVec(i, row(i)[0]/1e5)
	}
	var w mat.VecDense
	if err := w.SolveVec(X, y); err != nil {
		t.Fatal(err)
	}
	table := func(from, to int, shiftFrom int) []byte {
		var b bytes.Buffer
		b.WriteString("y,income,age,rooms,bedrooms,population,households,lat,lon,y_pred\n")
		for i := from; i < to; i++ {
			f := mat.Dot(&w, mat.NewVecDense(d+1, design(i)))
			if degrade && i >= shiftFrom {
				f += 0.5
			}
			r := row(i)
			fmt.Fprintf(&b, "%v", r[0]/1e5)
			for _, v := range r[1:] {
				fmt.Fprintf(&b, ",%v", v)
			}
			fmt.Fprintf(&b, ",%v\n", f)
		}
		return b.Bytes()
	}
	mid := nref + (n-nref)/2
	return fstest.MapFS{"ref.csv": {Data: table(0, nref, n)}, "prod.csv": {Data: table(nref, n, mid)}}
}

// On a real split, the calibrated check model's in-sample and production
// estimates are within 25% of the realised MSE, at most one chunk in five
// whose realised MSE lies inside the thresholds alerts, and a degraded
// deployed model alerts. Uncalibrated (the paper's Eq. 11, --folds 0) the
// production estimate is about 60% high and every chunk alerts.
func TestMSECalibrationCadata(t *testing.T) {
	if testing.Short() {
		t.Skip("trains seven check models on 6,000 rows")
	}
	clean, degraded := cadataSplit(t, false), cadataSplit(t, true)
	for _, folds := range []int{5, 0} {
		req := NewFitRequest()
		req.Train, req.Target, req.Prediction, req.Model, req.Folds = "ref.csv", "y", "y_pred", "check.json", folds
		var warnings []string
		env := job.Env{FS: clean, Warn: func(s string) { warnings = append(warnings, s) }}
		fit, err := Fit(context.Background(), env, req)
		if err != nil {
			t.Fatal(err)
		}
		in := float64(fit.ReferenceEstimatedMSE) / float64(fit.ReferenceRealizedMSE)
		var b bytes.Buffer
		if err := fit.WriteModel(&b); err != nil {
			t.Fatal(err)
		}
		for _, fsys := range []fstest.MapFS{clean, degraded} {
			fsys["check.json"] = &fstest.MapFile{Data: b.Bytes()}
		}
		if folds == 0 {
			// The uncalibrated model overestimates: a warning says so.
			if len(warnings) == 0 || !strings.Contains(warnings[0], "off the realised") {
				t.Errorf("uncalibrated fit %.3f x the realised MSE: warnings %q", in, warnings)
			}
			res, err := Estimate(context.Background(), job.Env{FS: clean}, mseCadataEstimate())
			if err != nil {
				t.Fatal(err)
			}
			prod := float64(res.EstimatedMSE) / float64(*res.RealizedMSE)
			t.Logf("--folds 0: in-sample %.3f, production %.3f x the realised MSE, %d of %d chunks alert", in, prod, res.Alerts, len(res.Chunks))
			if prod < 1.25 {
				t.Errorf("uncalibrated production estimate %.3f x the realised: the test no longer shows the bias", prod)
			}
			continue
		}
		for i, fsys := range []fstest.MapFS{clean, degraded} {
			degrade := i == 1
			res, err := Estimate(context.Background(), job.Env{FS: fsys}, mseCadataEstimate())
			if err != nil {
				t.Fatal(err)
			}
			lo, hi := float64(res.LowerThreshold), float64(res.UpperThreshold)
			var inside, insideAlerts, outside, outsideAlerts int
			for _, c := range res.Chunks {
				if r := float64(c.RealizedMSE); r >= lo && r <= hi {
					inside++
					if c.Alert {
						insideAlerts++
					}
				} else {
					outside++
					if c.Alert {
						outsideAlerts++
					}
				}
			}
			prod := float64(res.EstimatedMSE) / float64(*res.RealizedMSE)
			t.Logf("degrade=%v: in-sample %.4f / %.4f = %.3f (raw %.4f, factor %.3f); production %.4f / %.4f = %.3f; thresholds [%.3f, %.3f]; alerts %d/%d inside, %d/%d outside",
				degrade, float64(fit.ReferenceEstimatedMSE), float64(fit.ReferenceRealizedMSE), in, float64(fit.ReferenceRawEstimatedMSE), float64(fit.CalibrationFactor),
				float64(res.EstimatedMSE), float64(*res.RealizedMSE), prod, lo, hi, insideAlerts, inside, outsideAlerts, outside)
			if math.Abs(in-1) > 0.25 {
				t.Errorf("in-sample estimate off by %.0f%%", 100*(in-1))
			}
			if len(warnings) > 0 {
				t.Errorf("warnings on a calibrated fit: %s", strings.Join(warnings, "; "))
			}
			if 5*insideAlerts > inside {
				t.Errorf("%d of %d chunks inside the thresholds alert", insideAlerts, inside)
			}
			if !degrade {
				if math.Abs(prod-1) > 0.25 {
					t.Errorf("production estimate off by %.0f%%", 100*(prod-1))
				}
				continue
			}
			if outside < 4 || outsideAlerts < outside-1 {
				t.Errorf("degraded model: %d of %d chunks outside the thresholds alert", outsideAlerts, outside)
			}
		}
	}
}

func mseCadataEstimate() EstimateRequest {
	r := NewEstimateRequest()
	r.Model, r.Data, r.Target, r.Chunks = "check.json", "prod.csv", "y", 10
	return r
}
