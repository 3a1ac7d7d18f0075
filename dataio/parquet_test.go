package dataio

import (
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
)

// pqRow has the JSONL fields as parquet-go writes them from Go types:
// required LIST columns, optional scalars, and an unused column.
type pqRow struct {
	ID          string      `parquet:"id"`
	Question    string      `parquet:"question"`
	Samples     []string    `parquet:"samples,list"`
	Embeddings  [][]float64 `parquet:"embeddings,list"`
	Answer      *string     `parquet:"answer,optional"`
	Reference   []string    `parquet:"reference,list"`
	Correct     *bool       `parquet:"correct,optional"`
	JudgeScores []*float64  `parquet:"judge_scores,list"`
}

func writeParquet[T any](t testing.TB, path string, rows []T, opts ...parquet.WriterOption) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w := parquet.NewGenericWriter[T](f, opts...)
	if _, err := w.Write(rows); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestReadParquet(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "r.parquet")
	writeParquet(t, p, []pqRow{
		{ID: "q1", Question: "?", Samples: []string{"a", "b"}, Embeddings: [][]float64{{1, 2}, {3, 4}},
			Answer: ptr("a"), Reference: []string{"A", "alpha"}, Correct: ptr(true), JudgeScores: []*float64{ptr(90.0), nil}},
		{ID: "q2", Samples: []string{"c"}},
	})
	recs, err := ReadRecords(p)
	if err != nil {
		t.Fatal(err)
	}
	want := []Record{
		{ID: "q1", Samples: []string{"a", "b"}, Embeddings: [][]float64{{1, 2}, {3, 4}}, Answer: ptr("a"),
			Reference: []string{"A", "alpha"}, Correct: ptr(true), JudgeScores: []*float64{ptr(90.0), nil}, Line: 1},
		{ID: "q2", Samples: []string{"c"}, Line: 2},
	}
	if !reflect.DeepEqual(recs, want) {
		t.Errorf("got\n%+v\nwant\n%+v", recs, want)
	}
}

// TestReadParquetVariants covers the other spellings the brief allows:
// numeric ids, reference as a plain string, float32 embeddings, and all
// columns optional as pyarrow writes them.
func TestReadParquetVariants(t *testing.T) {
	dir := t.TempDir()
	type row struct {
		ID         int64       `parquet:"id"`
		Samples    []string    `parquet:"samples,list"`
		Embeddings [][]float32 `parquet:"embeddings,list"`
		Reference  string      `parquet:"reference"`
	}
	p := filepath.Join(dir, "v.parquet")
	writeParquet(t, p, []row{{ID: 7, Samples: []string{"x"}, Embeddings: [][]float32{{0.5, 2}}, Reference: "ref"}})
	recs, err := ReadRecords(p)
	if err != nil {
		t.Fatal(err)
	}
	want := []Record{{ID: "7", Samples: []string{"x"}, Embeddings: [][]float64{{0.5, 2}}, Reference: []string{"ref"}, Line: 1}}
	if !reflect.DeepEqual(recs, want) {
		t.Errorf("got %+v, want %+v", recs, want)
	}

	schema := parquet.NewSchema("r", parquet.Group{
		"id":      parquet.Optional(parquet.String()),
		"samples": parquet.Optional(parquet.List(parquet.Optional(parquet.String()))),
	})
	p2 := filepath.Join(dir, "opt.parquet")
	writeParquet(t, p2, []map[string]any{
		{"id": "a", "samples": []any{"x", "y"}},
		{"id": nil, "samples": []any{"z"}},
		{"id": "c", "samples": []any{"w", nil}},
	}, schema)
	_, err = ReadRecords(p2)
	ie := wantInputError(t, err, "opt.parquet row 3: samples[1]: want a string, got null")
	if ie.Line != 3 || ie.Field != "samples[1]" {
		t.Errorf("Line, Field = %d, %q", ie.Line, ie.Field)
	}
}

func TestReadParquetErrors(t *testing.T) {
	dir := t.TempDir()
	type noSamples struct {
		ID      string   `parquet:"id"`
		Answers []string `parquet:"answers,list"`
	}
	missing := filepath.Join(dir, "nosamples.parquet")
	writeParquet(t, missing, []noSamples{{ID: "a", Answers: []string{"x"}}})

	type ragged struct {
		Samples    []string    `parquet:"samples,list"`
		Embeddings [][]float64 `parquet:"embeddings,list"`
	}
	rag := filepath.Join(dir, "ragged.parquet")
	writeParquet(t, rag, []ragged{
		{Samples: []string{"a"}, Embeddings: [][]float64{{1, 2}}},
		{Samples: []string{"b", "c"}, Embeddings: [][]float64{{1, 2}, {3}}},
	})
	empty := filepath.Join(dir, "empty.parquet")
	writeParquet(t, empty, []ragged{})

	good := filepath.Join(dir, "good.parquet")
	writeParquet(t, good, []ragged{{Samples: []string{"a"}}})
	b, _ := os.ReadFile(good)
	garbage := writeFile(t, dir, "garbage.parquet", []byte("PAR1 this is not really parquet PAR1"))
	trunc := writeFile(t, dir, "trunc.parquet", b[:len(b)/2])
	// Flip bytes in the middle of the file (page data and headers).
	flipped := append([]byte{}, b...)
	for i := 8; i < len(flipped)/2; i++ {
		flipped[i] ^= 0x5a
	}
	corrupt := writeFile(t, dir, "corrupt.parquet", flipped)

	tests := []struct {
		path string
		want []string
	}{
		{missing, []string{"nosamples.parquet", "samples", "no such column", "answers, id"}},
		{rag, []string{"ragged.parquet row 2: embeddings[1]: has length 1 but embeddings[0] has length 2"}},
		{empty, []string{"empty.parquet", "no records"}},
		{garbage, []string{"garbage.parquet"}},
		{trunc, []string{"trunc.parquet"}},
		{corrupt, []string{"corrupt.parquet"}},
	}
	for _, tt := range tests {
		t.Run(filepath.Base(tt.path), func(t *testing.T) {
			_, err := ReadRecords(tt.path)
			wantInputError(t, err, tt.want...)
		})
	}
}

// A Parquet file whose samples column holds more than MaxSamplesPerRecord
// per row is refused from the footer, before the pages are decoded; one
// whose columns declare more than MaxCompressionRatio times the file size
// (past the floor) is refused as a decompression bomb.
func TestReadParquetBounds(t *testing.T) {
	dir := t.TempDir()
	many := filepath.Join(dir, "many.parquet")
	samples := make([]string, MaxSamplesPerRecord+1)
	for i := range samples {
		samples[i] = "same answer"
	}
	writeParquet(t, many, []pqRow{{ID: "q", Samples: samples}})
	if _, err := ReadRecords(many); err == nil || !strings.Contains(err.Error(), "per prompt") {
		t.Errorf("%d samples in one row: %v", len(samples), err)
	}
	big := filepath.Join(dir, "big.parquet")
	type zrow struct {
		Samples []string `parquet:"samples,list,zstd"`
	}
	rows := make([]zrow, 500)
	for i := range rows {
		for j := 0; j < 100; j++ {
			rows[i].Samples = append(rows[i].Samples, strings.Repeat("x", 100)+strconv.Itoa(j))
		}
	}
	writeParquet(t, big, rows)
	withFloor(t, 1<<10)
	if _, err := ReadRecords(big); err == nil || !strings.Contains(err.Error(), "decompression bomb") {
		t.Errorf("5 MB of samples in a small file: %v", err)
	}
	bombFloor = 64 << 20
	if _, err := ReadRecords(big); err != nil {
		t.Errorf("under the floor: %v", err)
	}
}

// The question of a Parquet row is read as a JSONL row's: its "prompt",
// else the content of the last user message of "messages".
func TestReadParquetQuestion(t *testing.T) {
	dir := t.TempDir()
	type msg struct {
		Role    string `parquet:"role"`
		Content string `parquet:"content"`
	}
	type row struct {
		ID       string   `parquet:"id"`
		Prompt   *string  `parquet:"prompt,optional"`
		Messages []msg    `parquet:"messages,list"`
		Samples  []string `parquet:"samples,list"`
	}
	p := filepath.Join(dir, "q.parquet")
	writeParquet(t, p, []row{
		{ID: "p", Prompt: ptr("Capital of France?"), Samples: []string{"Paris", "Lyon"}},
		{ID: "m", Messages: []msg{{"system", "Be brief."}, {"user", "Capital of Italy?"}, {"assistant", "Rome"}}, Samples: []string{"Rome", "Milan"}},
		{ID: "both", Prompt: ptr("the prompt"), Messages: []msg{{"user", "the message"}}, Samples: []string{"a", "b"}},
		{ID: "none", Samples: []string{"a", "b"}},
	})
	recs, err := ReadRecords(p)
	if err != nil {
		t.Fatal(err)
	}
	jl := filepath.Join(dir, "q.jsonl")
	if err := os.WriteFile(jl, []byte(`{"id":"p","prompt":"Capital of France?","samples":["Paris","Lyon"]}
{"id":"m","messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"Capital of Italy?"},{"role":"assistant","content":"Rome"}],"samples":["Rome","Milan"]}
{"id":"both","prompt":"the prompt","messages":[{"role":"user","content":"the message"}],"samples":["a","b"]}
{"id":"none","samples":["a","b"]}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	want, err := ReadRecords(jl)
	if err != nil {
		t.Fatal(err)
	}
	for i, q := range []string{"Capital of France?", "Capital of Italy?", "the prompt", ""} {
		if recs[i].Question != q || want[i].Question != q {
			t.Errorf("row %s: Parquet's question %q, JSONL's %q, want %q", recs[i].ID, recs[i].Question, want[i].Question, q)
		}
	}
}
