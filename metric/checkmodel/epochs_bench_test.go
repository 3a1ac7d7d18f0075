package checkmodel

import (
	"context"
	"testing"
)

// BenchmarkEpochSelectionTable1 compares the MAE of the one-step
// estimates (raw K* and calibrated K*) trained a fixed 200 epochs with
// epochs chosen by validation up to 200, on the Section 4.1 protocol of
// "A One-Step MSE Estimation of Models in Production" (100 training and
// 10,000 operational samples of Eq. 19 per trial; the paper's Table 1).
// The prediction model f trains 200 epochs in both. Run with
//
//	go test ./checkmodel -run '^$' -bench EpochSelectionTable1 -benchtime 1x
func BenchmarkEpochSelectionTable1(b *testing.B) {
	const trials = 30
	for _, noise := range []Noise{NoiseA, NoiseB, NoiseC} {
		for _, sel := range []EpochSelection{FixedEpochs, ValidationEpochs} {
			b.Run("synthetic-"+string(noise)+"/"+string(sel), func(b *testing.B) {
				cfg := DefaultConfig()
				src := SyntheticTrials(noise, 100, 10000, cfg)
				mcfg := cfg
				mcfg.Epochs = sel
				var methods []Method
				for _, name := range []string{"kstar", "kstar-cal"} {
					m, err := NewMethod(name, mcfg)
					if err != nil {
						b.Fatal(err)
					}
					methods = append(methods, m)
				}
				for b.Loop() {
					res, err := Bench(context.Background(), src, BenchConfig{Trials: trials, Methods: methods, Seed: 1})
					if err != nil {
						b.Fatal(err)
					}
					for _, m := range res.Methods {
						b.ReportMetric(m.MAE, m.Name+"-MAE")
					}
				}
			})
		}
	}
}
