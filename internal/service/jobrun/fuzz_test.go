package jobrun

import (
	"errors"
	"testing"

	"github.com/genlens/genlens/fault"
	"github.com/genlens/genlens/internal/format/strictjson"
)

// FuzzPrepare feeds arbitrary bodies to every kind's strict decoding and
// validation: the answer is a task or a field error (or, for a kind not
// in Kinds, ErrUnknownKind), never a panic or another kind of error.
func FuzzPrepare(f *testing.F) {
	for _, c := range kindCases() {
		f.Add(c.kind, []byte(c.body))
	}
	f.Add("stats", []byte(`{"in":"a.npy","in":"b.npy"}`))
	f.Add("is", []byte(`{"splits":1e400}`))
	f.Add("select", []byte(`{"pools":[null,{}]}`))
	f.Add("nope", []byte(`{}`))
	f.Fuzz(func(t *testing.T, kind string, body []byte) {
		tk, err := prepare(kind, body, prepEnv{uploadsDir: "/data/uploads"})
		var fe *fault.FieldError
		switch {
		case err == nil:
			if tk == nil || tk.run == nil {
				t.Fatal("no error and no task")
			}
		case errors.Is(err, ErrUnknownKind):
			if KnownKind(kind) {
				t.Fatalf("known kind %q reported unknown", kind)
			}
		case !errors.As(err, &fe):
			t.Fatalf("%s %q: %v (%T), want a field error", kind, body, err, err)
		}
	})
}

// FuzzCheckBatch: posted rows become a matrix or a field error.
func FuzzCheckBatch(f *testing.F) {
	f.Add([]byte(`[[0.5,0.5],[1,0]]`), 2, true)
	f.Add([]byte(`[[1,2,3]]`), 3, false)
	f.Fuzz(func(t *testing.T, body []byte, d int, probs bool) {
		var rows [][]float64
		if strictjson.Unmarshal(body, &rows) != nil || d < 1 || d > 64 {
			return
		}
		m, err := checkBatch(rows, d, probs)
		var fe *fault.FieldError
		if err != nil && !errors.As(err, &fe) {
			t.Fatalf("%v (%T)", err, err)
		}
		if err == nil {
			if r, c := m.Dims(); r != len(rows) || c != d {
				t.Fatalf("dims %d x %d", r, c)
			}
		}
	})
}
