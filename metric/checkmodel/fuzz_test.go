package checkmodel

import (
	"encoding/json"
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/genlens/genlens/fault"
	"gonum.org/v1/gonum/mat"
)

// FuzzDecodeModel: whatever bytes a model file holds, DecodeModel does
// not panic, every error is an *fault.InputError on the file, and a
// model it accepts can be applied to data of its width without failing,
// as Validate promises.
func FuzzDecodeModel(f *testing.F) {
	x, y := remark3Data(rand.New(rand.NewPCG(1, 2)), 20)
	cfg := DefaultConfig()
	cfg.Train.Epochs = 2
	cfg.Hidden = []int{3}
	m, err := Fit(ctx, x, y, y, cfg, 1)
	if err != nil {
		f.Fatal(err)
	}
	m.Columns.Prediction = "1"
	good, _ := json.Marshal(m)
	f.Add(good)
	f.Add([]byte(`{"format": "genlens-checkmodel/1"}`))
	f.Add([]byte(`{"hello": 1}`))
	f.Add([]byte("x,y\n1,2\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := DecodeModel("m.json", b)
		if err != nil {
			var ie *fault.InputError
			if !errors.As(err, &ie) || ie.File != "m.json" {
				t.Fatalf("error %v is not an InputError on m.json", err)
			}
			return
		}
		d := len(m.XMean)
		if d > 1000 {
			return
		}
		if _, err := m.RowEstimates(mat.NewDense(2, d, nil), []float64{0, 1}); err != nil {
			t.Fatalf("a validated model failed on data of its width: %v", err)
		}
	})
}
