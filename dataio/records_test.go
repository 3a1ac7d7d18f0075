package dataio

import (
	"bytes"
	"compress/gzip"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func ptr[T any](v T) *T { return &v }

func TestDecodeJSONL(t *testing.T) {
	in := "\xef\xbb\xbf" + // UTF-8 byte order mark
		`{"id": "q1", "question": "ignored", "samples": ["a", "b"], "reference": "Paris", "extra": {"x": [1, NaN]}}` + "\n" +
		"\n" +
		`{"id": 12.50, "samples": ["c"], "embeddings": [[1, 2.5, -3e-2]], "answer": "c", "reference": ["x", "y"], "correct": false, "judge_scores": [100, null]}` + "\r\n" +
		`{"samples": [], "answer": null, "reference": null, "correct": true, "embeddings": [], "judge_scores": []}` + "\n" +
		`   {"id": "last", "samples": ["d", "e"], "embeddings": [[0, 0, 1], [1, 0, 0]]}` // no final newline
	recs, err := decodeJSONL(src{file: "r.jsonl"}, strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	want := []Record{
		{ID: "q1", Samples: []string{"a", "b"}, Reference: []string{"Paris"}, Line: 1},
		{ID: "12.50", Samples: []string{"c"}, Embeddings: [][]float64{{1, 2.5, -0.03}}, Answer: ptr("c"),
			Reference: []string{"x", "y"}, Correct: ptr(false), JudgeScores: []*float64{ptr(100.0), nil}, Line: 3},
		{ID: "row-4", Samples: []string{}, Correct: ptr(true), Line: 4},
		{ID: "last", Samples: []string{"d", "e"}, Embeddings: [][]float64{{0, 0, 1}, {1, 0, 0}}, Line: 5},
	}
	if !reflect.DeepEqual(recs, want) {
		t.Errorf("got\n%+v\nwant\n%+v", recs, want)
	}
}

func TestDecodeJSONArray(t *testing.T) {
	in := "\n[\n  {\"id\": 1, \"samples\": [\"a\"]},\n  {\"samples\": [\"b\"],\n   \"judge_scores\": [1]}\n]\n"
	recs, err := decodeJSONL(src{file: "r.json"}, strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	want := []Record{
		{ID: "1", Samples: []string{"a"}, Line: 3},
		{ID: "row-4", Samples: []string{"b"}, JudgeScores: []*float64{ptr(1.0)}, Line: 4},
	}
	if !reflect.DeepEqual(recs, want) {
		t.Errorf("got %+v, want %+v", recs, want)
	}
	tests := []struct {
		name, in string
		line     int
		want     string
	}{
		{"syntax", "[\n{\"samples\": [\"a\"]},\n{\"samples\": [\"b\"}\n]", 3, "invalid JSON"},
		{"NaN in array file", "[\n{\"samples\": [\"a\"]},\n\n{\"samples\": [\"b\"], \"embeddings\": [[NaN]]}]", 4, "embeddings[0][0]: is NaN"},
		{"element not object", "[{\"samples\": []},\n 5]", 2, "want a JSON object, got a number"},
		{"unterminated", "[{\"samples\": []},\n", 2, "unexpected end"},
		{"trailing", "[{\"samples\": []}]\n{}", 1, "after the JSON array"},
		{"empty", "[]", 0, "no records"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := decodeJSONL(src{file: "r.json"}, strings.NewReader(tt.in))
			ie := wantInputError(t, err, "r.json", tt.want)
			if ie.Line != tt.line {
				t.Errorf("Line = %d, want %d", ie.Line, tt.line)
			}
		})
	}
}

func TestDecodeJSONLErrors(t *testing.T) {
	ok := `{"id": "a", "samples": ["x", "y"], "embeddings": [[1, 2], [3, 4]]}` + "\n"
	tests := []struct {
		name  string
		in    string
		line  int
		field string
		want  string
	}{
		{"syntax error", ok + ok + `{"samples": ["x", }` + "\n", 3, "", "answers.jsonl line 3: invalid JSON at byte"},
		{"truncated object", ok + `{"samples": ["x"`, 2, "", "invalid JSON"},
		{"two values", `{"samples": []} {"samples": []}`, 1, "", "more than one JSON value"},
		{"not an object", ok + `["x"]`, 2, "", "want a JSON object, got a list"},
		{"samples missing", ok + `{"id": "b", "answers": ["x"]}`, 2, "samples", "line 2: samples: missing"},
		{"samples null", `{"samples": null}`, 1, "samples", "want a list of strings, got null"},
		{"samples string", `{"samples": "x"}`, 1, "samples", "want a list of strings, got a string"},
		{"samples element", `{"samples": ["x", 3]}`, 1, "samples[1]", "samples[1]: want a string, got a number"},
		{"samples NaN", `{"samples": ["x", NaN]}`, 1, "samples[1]", "want a string, got NaN"},
		{"samples squared too many", `{"samples": [` + strings.Repeat(`"a",`, 40000) + `"a"]}`, 1, "samples", "40001 samples; at most 4096 per prompt"},
		{"embeddings count", ok + ok + `{"samples": ["x", "y", "z"], "embeddings": [[1, 2], [3, 4]]}`, 3, "embeddings",
			"line 3: embeddings: has 2 vectors but samples has 3 entries"},
		{"embeddings ragged in row", `{"samples": ["x", "y", "z"], "embeddings": [[1, 2], [3, 4], [5]]}`, 1, "embeddings[2]",
			"embeddings[2]: has length 1 but embeddings[0] has length 2 (ragged)"},
		{"embeddings dim across rows", ok + `{"samples": ["x"], "embeddings": [[1, 2, 3]]}`, 2, "embeddings",
			"vectors have dimension 3 but those of line 1 have dimension 2"},
		{"embeddings NaN (Python json)", ok + ok + ok + `{"samples": ["a", "b", "c"], "embeddings": [[0, 0], [0, 0], [1, NaN]]}`, 4, "embeddings[2][1]",
			"answers.jsonl line 4: embeddings[2][1]: is NaN"},
		{"embeddings Infinity", `{"samples": ["a"], "embeddings": [[-Infinity, 1]]}`, 1, "embeddings[0][0]", "is -Inf"},
		{"embeddings overflow", `{"samples": ["a"], "embeddings": [[1e999]]}`, 1, "embeddings[0][0]", "is +Inf (1e999 overflows float64)"},
		{"embeddings string", `{"samples": ["a"], "embeddings": [["1"]]}`, 1, "embeddings[0][0]", "want a number, got a string"},
		{"embeddings flat", `{"samples": ["a"], "embeddings": [1, 2]}`, 1, "embeddings[0]", "want a list of numbers"},
		{"embeddings object", `{"samples": ["a"], "embeddings": {}}`, 1, "embeddings", "want a list of vectors"},
		{"embeddings empty vector", `{"samples": ["a"], "embeddings": [[]]}`, 1, "embeddings[0]", "empty vector"},
		{"id list", `{"id": [1], "samples": []}`, 1, "id", "want a string or a number, got a list"},
		{"answer number", `{"samples": [], "answer": 3}`, 1, "answer", "want a string"},
		{"reference number", `{"samples": [], "reference": 3}`, 1, "reference", "want a string or a list of strings"},
		{"reference element", `{"samples": [], "reference": ["a", null]}`, 1, "reference[1]", "want a string, got null"},
		{"correct string", `{"samples": [], "correct": "yes"}`, 1, "correct", "want true, false or null"},
		{"judge NaN", `{"samples": [], "judge_scores": [1, NaN]}`, 1, "judge_scores[1]", "is NaN (use null"},
		{"judge string", `{"samples": [], "judge_scores": ["90"]}`, 1, "judge_scores[0]", "want a number or null"},
		{"judge scalar", `{"samples": [], "judge_scores": 90}`, 1, "judge_scores", "want a list of numbers"},
		{"empty file", "", 0, "", "no records"},
		{"blank file", "\n \n\t\n", 0, "", "no records"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := decodeJSONL(src{file: "answers.jsonl"}, strings.NewReader(tt.in))
			ie := wantInputError(t, err, "answers.jsonl", tt.want)
			if ie.Line != tt.line || ie.Field != tt.field {
				t.Errorf("Line, Field = %d, %q; want %d, %q", ie.Line, ie.Field, tt.line, tt.field)
			}
		})
	}
}

func TestSanitizeNonFinite(t *testing.T) {
	in := `{"a NaN": "Infinity \" NaN", "x": [NaN, -Infinity, Infinity]}` + "\n"
	want := `{"a NaN": "Infinity \" NaN", "x": ["\u0000NaN", "\u0000-Inf", "\u0000+Inf"]}` + "\n"
	if got := string(sanitizeNonFinite([]byte(in))); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

func TestReadRecordsFiles(t *testing.T) {
	dir := t.TempDir()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	zw.Write([]byte(`{"id": "a", "samples": ["x"]}` + "\n"))
	zw.Close()
	recs, err := ReadRecords(writeFile(t, dir, "r.jsonl.gz", b.Bytes()))
	if err != nil || len(recs) != 1 || recs[0].ID != "a" {
		t.Errorf("gzip: %v, %v", recs, err)
	}
	recs, err = ReadRecords(writeFile(t, dir, "r.ndjson", []byte(`{"samples": ["x"]}`)))
	if err != nil || len(recs) != 1 || recs[0].ID != "row-1" {
		t.Errorf("ndjson: %v, %v", recs, err)
	}
	_, err = ReadRecords(writeFile(t, dir, "r.txt", []byte("{}")))
	wantInputError(t, err, "r.txt", "unknown file type")
	_, err = ReadRecords(filepath.Join(dir, "missing.jsonl"))
	wantInputError(t, err, "missing.jsonl", "cannot open")
}
