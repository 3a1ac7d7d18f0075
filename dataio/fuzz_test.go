package dataio

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/genlens/genlens/fault"
)

// requireInputError fails unless err is what every reader promises for
// bad input: an *InputError whose message is one line.
func requireInputError(t *testing.T, err error) {
	t.Helper()
	var ie *fault.InputError
	if !errors.As(err, &ie) {
		t.Fatalf("want *InputError, got %T: %v", err, err)
	}
	if strings.Contains(err.Error(), "\n") {
		t.Fatalf("multi-line message %q", err.Error())
	}
}

// Run for longer with, e.g.:
//
//	go test ./dataio -run XXX -fuzz FuzzReadNPY -fuzztime 30s

func FuzzReadNPY(f *testing.F) {
	le, be := binary.LittleEndian, binary.BigEndian
	f3, _ := fortran234()
	seeds := [][]byte{
		npyBytes(1, hdr("<f8", false, "(2, 2)"), f64s(le, 1, 2, 3, 4)),
		npyBytes(1, hdr("<f4", false, "(3,)"), f32s(le, 1, 2, 3)),
		npyBytes(1, hdr(">f8", false, "()"), f64s(be, 1)),
		npyBytes(1, hdr("<f8", true, "(2, 3, 4)"), f64s(le, f3...)),
		npyBytes(1, hdr("|u1", false, "(2, 2, 1)"), []byte{1, 2, 3, 4}),
		npyBytes(1, hdr("<i8", true, "(1, 2)"), le.AppendUint64(le.AppendUint64(nil, 5), 6)),
		npyBytes(1, hdr("<f2", false, "(1,)"), []byte{0, 0x3c}),
		npyBytes(2, hdr("<f8", false, "(0, 3)"), nil),
		npyBytes(3, "{'shape': (1L,), 'descr': '<u2', 'fortran_order': False}", []byte{1, 0}),
		npyBytes(1, hdr("<f8", false, "(1,)"), f64s(le, math.NaN())),
		npyBytes(1, "{'descr': [('a', '<f8')], 'fortran_order': False, 'shape': (1,), }", make([]byte, 8)),
		[]byte("\x93NUMPY\x01\x00"),
		[]byte("PK\x03\x04"),
		nil,
	}
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		// Both the known-size (file) and unknown-size (stream) paths.
		a, err := decodeNPY(src{file: "f.npy"}, bytes.NewReader(b), int64(len(b)))
		a2, err2 := decodeNPY(src{file: "f.npy", stream: true}, bytes.NewReader(b), -1)
		if (err == nil) != (err2 == nil) {
			t.Fatalf("file and stream paths disagree: %v vs %v", err, err2)
		}
		if err != nil {
			requireInputError(t, err)
			return
		}
		if a.Size() != len(a.Data) || !reflect.DeepEqual(a, a2) {
			t.Fatalf("inconsistent result: shape %v, %d elements", a.Shape, len(a.Data))
		}
		// Whatever we accepted must survive a write and a read.
		var buf bytes.Buffer
		if err := encodeNPY(&buf, a); err != nil {
			return // e.g. a shape too long for a version 1.0 header
		}
		back, err := decodeNPY(src{file: "back.npy"}, bytes.NewReader(buf.Bytes()), int64(buf.Len()))
		if err != nil {
			t.Fatalf("re-read of our own output failed: %v", err)
		}
		if !reflect.DeepEqual(back.Shape, a.Shape) || len(back.Data) != len(a.Data) {
			t.Fatalf("round trip changed shape %v -> %v", a.Shape, back.Shape)
		}
		for i := range a.Data {
			if math.Float64bits(back.Data[i]) != math.Float64bits(a.Data[i]) {
				t.Fatalf("round trip changed element %d: %v -> %v", i, a.Data[i], back.Data[i])
			}
		}
	})
}

func FuzzReadJSONL(f *testing.F) {
	seeds := []string{
		`{"id": "a", "samples": ["x", "y"], "embeddings": [[1, 2], [3, 4]], "reference": "r"}` + "\n" +
			`{"id": 3, "samples": ["z"], "embeddings": [[5, 6]], "judge_scores": [null, 1], "correct": true, "answer": "z"}`,
		`{"samples": ["x"], "embeddings": [[NaN]]}`,
		`{"samples": ["x"], "reference": ["a", "b"], "x": -Infinity}`,
		`{"samples": ["x"]} {"samples": []}`,
		"[\n{\"samples\": [\"a\"]},\n{\"samples\": [\"b\"]}\n]",
		"\xef\xbb\xbf\n\n{\"samples\": []}\r\n",
		`{"samples": ["x", "y"], "embeddings": [[1e999, 1], [2]]}`,
		`{"samples": "x"}`,
		`{"samples": ["ab", "c"], "logprobs": [[{"token": "a", "logprob": -0.5, "top": [{"token": "a", "logprob": -0.5}, {"token": "\u00e9", "logprob": -1}]}, {"token": "b", "logprob": -0.1}], [{"logprob": -2, "top": [{"token": null, "logprob": -2}]}]], "answer_logprobs": [{"token": "", "logprob": 0}]}`,
		`[1, 2`,
		"",
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		recs, err := decodeJSONL(src{file: "f.jsonl"}, bytes.NewReader(b))
		if err != nil {
			requireInputError(t, err)
			return
		}
		if len(recs) == 0 {
			t.Fatal("no records and no error")
		}
		dim := -1
		for _, r := range recs {
			if r.Line < 1 || r.Samples == nil {
				t.Fatalf("bad record %+v", r)
			}
			for _, toks := range append(slices.Clone(r.Logprobs), r.AnswerLogprobs) {
				for _, tok := range toks {
					if tok.Text != "" && !tok.HasText || tok.TopText != nil && len(tok.TopText) != len(tok.Top) {
						t.Fatalf("line %d: token %+v: texts without their flag, or not one per alternative", r.Line, tok)
					}
				}
			}
			if r.Embeddings == nil {
				continue
			}
			if len(r.Embeddings) != len(r.Samples) {
				t.Fatalf("line %d: %d embeddings for %d samples", r.Line, len(r.Embeddings), len(r.Samples))
			}
			for _, v := range r.Embeddings {
				if dim < 0 {
					dim = len(v)
				}
				if len(v) != dim || dim == 0 {
					t.Fatalf("line %d: ragged embeddings accepted", r.Line)
				}
				for _, x := range v {
					if math.IsNaN(x) || math.IsInf(x, 0) {
						t.Fatalf("line %d: non-finite embedding accepted", r.Line)
					}
				}
			}
		}
	})
}

func FuzzReadCSV(f *testing.F) {
	for _, s := range []string{"a,b\n1,2\n", "1,2\n3,4\n", "1\n\n2\n", "1,nan\n", "\"1\",2\n3,\"4\n", "# c\n1,2,3\n4,5\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		_, a, err := decodeCSVComma(src{file: "f.csv"}, bytes.NewReader(b))
		if err != nil {
			requireInputError(t, err)
			return
		}
		if a.Rank() != 2 || a.Size() != len(a.Data) || a.Size() == 0 {
			t.Fatalf("bad array shape %v with %d elements", a.Shape, len(a.Data))
		}
		for _, x := range a.Data {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				t.Fatal("non-finite value accepted")
			}
		}
	})
}

func FuzzReadTable(f *testing.F) {
	for _, s := range []string{"ts,y,f\n2026-01-02,1,\n2026-01-03,,2\n", "1,2\n3,4\n", "\ufeffa,b\n1,2\n", "a,a\n1,2\n", "x\n\n#c\n1\n", "\"1\",2\n3,\"4\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		tb, err := decodeTableComma(src{file: "f.csv"}, bytes.NewReader(b), Header(len(b)%3))
		if err != nil {
			requireInputError(t, err)
			return
		}
		if tb.Rows() == 0 || tb.Cols() == 0 {
			t.Fatalf("empty table accepted: %d×%d", tb.Rows(), tb.Cols())
		}
		for j := 0; j < tb.Cols(); j++ {
			// Every parse either succeeds with finite values or fails
			// with an InputError; none panics.
			if v, err := tb.Floats(j, true); err == nil {
				for _, x := range v {
					if math.IsInf(x, 0) {
						t.Fatal("infinite value accepted")
					}
				}
			} else if !errors.As(err, new(*fault.InputError)) {
				t.Fatalf("Floats: want *InputError, got %T", err)
			}
			if _, err := tb.Times(j); err != nil && !errors.As(err, new(*fault.InputError)) {
				t.Fatalf("Times: want *InputError, got %T", err)
			}
			if _, err := tb.Column(tb.Name(j)); err != nil {
				t.Fatalf("Column(Name(%d)): %v", j, err)
			}
		}
	})
}

// FuzzReadNPZ feeds arbitrary archives through the .npz path of ReadArray:
// corrupt zips, members that are not .npy, bad member headers and
// compression methods other than store/deflate must all end in one
// *InputError line, never a panic.
func FuzzReadNPZ(f *testing.F) {
	le := binary.LittleEndian
	good := npyBytes(1, hdr("<f8", false, "(2, 2)"), f64s(le, 1, 2, 3, 4))
	f.Add(zipBytes(f, zip.Store, "a.npy", good), "")
	f.Add(zipBytes(f, zip.Deflate, "a.npy", good, "b.npy", good), "b")
	f.Add(zipBytes(f, zip.Deflate, "a.npy", good, "b.npy", good), "")
	f.Add(zipBytes(f, zip.Store, "a.txt", []byte("x")), "")
	f.Add(zipBytes(f, zip.Store, "a.npy", []byte("\x93NUMPY\x01\x00")), "a")
	f.Add([]byte("PK\x03\x04"), "")
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, b []byte, key string) {
		p := filepath.Join(dir, "f.npz")
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		a, err := ReadArray(p, ReadOptions{Key: key})
		if err != nil {
			requireInputError(t, err)
			return
		}
		if a.Size() != len(a.Data) || len(a.Data) == 0 {
			t.Fatalf("inconsistent result: shape %v, %d elements", a.Shape, len(a.Data))
		}
		for i, v := range a.Data {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				t.Fatalf("accepted a non-finite element %d: %v", i, v)
			}
		}
	})
}

// FuzzReadParquet: parquet-go can panic on corrupt files; ReadRecords must
// turn every such file into one *InputError line.
func FuzzReadParquet(f *testing.F) {
	dir := f.TempDir()
	seed := filepath.Join(dir, "seed.parquet")
	writeParquet(f, seed, []pqRow{
		{ID: "q1", Samples: []string{"a b", "c"}, Embeddings: [][]float64{{1, 2}, {3, 4}}, Reference: []string{"A"}},
		{ID: "q2", Samples: []string{"d"}},
	})
	b, err := os.ReadFile(seed)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Add(b[:len(b)/2])
	f.Add([]byte("PAR1PAR1"))
	// Token texts and their alternatives'.
	withTokens := filepath.Join(dir, "tokens.parquet")
	writeParquet(f, withTokens, []pqLogprobsRow{{ID: "q1", Samples: []string{"ab"},
		Logprobs:       [][]pqToken{{{Token: "a", Logprob: -0.5, Top: []pqAlt{{"a", -0.5}, {"é", -1}}}, {Token: "b", Logprob: -0.1}}},
		AnswerLogprobs: []pqToken{{Token: "", Logprob: 0}}}})
	if b, err = os.ReadFile(withTokens); err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Fuzz(func(t *testing.T, b []byte) {
		p := filepath.Join(dir, "f.parquet")
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		recs, err := ReadRecords(p)
		if err != nil {
			requireInputError(t, err)
			return
		}
		for _, r := range recs {
			for _, toks := range append(slices.Clone(r.Logprobs), r.AnswerLogprobs) {
				for _, tok := range toks {
					if tok.TopText != nil && len(tok.TopText) != len(tok.Top) {
						t.Fatalf("line %d: %d alternatives' texts for %d alternatives", r.Line, len(tok.TopText), len(tok.Top))
					}
				}
			}
			for _, e := range r.Embeddings {
				for _, v := range e {
					if math.IsNaN(v) || math.IsInf(v, 0) {
						t.Fatalf("line %d: accepted a non-finite embedding %v", r.Line, v)
					}
				}
			}
		}
	})
}
