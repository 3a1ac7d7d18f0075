package dataio

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// pqToken is a token of the logprobs columns as a Parquet writer lays
// them out: a struct with the JSON Lines fields.
type pqToken struct {
	Token   string  `parquet:"token"`
	Logprob float64 `parquet:"logprob"`
	Top     []pqAlt `parquet:"top,list"`
}

type pqAlt struct {
	Token   string  `parquet:"token"`
	Logprob float64 `parquet:"logprob"`
}

type pqLogprobsRow struct {
	ID             string      `parquet:"id"`
	Samples        []string    `parquet:"samples,list"`
	Logprobs       [][]pqToken `parquet:"logprobs,list"`
	AnswerLogprobs []pqToken   `parquet:"answer_logprobs,list"`
}

// The Parquet rows carry the samples' and the answer's token logprobs,
// with their top-K alternatives, as the JSON Lines rows do.
func TestReadParquetLogprobs(t *testing.T) {
	p := filepath.Join(t.TempDir(), "r.parquet")
	writeParquet(t, p, []pqLogprobsRow{
		{ID: "q1", Samples: []string{"Paris", "Lyon is"},
			Logprobs: [][]pqToken{
				{{Token: "Paris", Logprob: -0.25, Top: []pqAlt{{"Paris", -0.25}, {"Lyon", -1.5}}}},
				{{Token: "Lyon", Logprob: -1.5}, {Token: " is", Logprob: -0.125}},
			},
			AnswerLogprobs: []pqToken{{Token: "Paris", Logprob: -0.5, Top: []pqAlt{{"Paris", -0.5}}}}},
		{ID: "q2", Samples: []string{"x"}},
	})
	recs, err := ReadRecords(p)
	if err != nil {
		t.Fatal(err)
	}
	want := [][][]Token{{{{Logprob: -0.25, Top: []float64{-0.25, -1.5}, Text: "Paris", HasText: true, TopText: []string{"Paris", "Lyon"}}},
		{{Logprob: -1.5, Text: "Lyon", HasText: true}, {Logprob: -0.125, Text: " is", HasText: true}}}, nil}
	// An empty list is an answer of no tokens, as in JSON Lines (its
	// scores are unavailable all the same).
	wantAnswer := [][]Token{{{Logprob: -0.5, Top: []float64{-0.5}, Text: "Paris", HasText: true, TopText: []string{"Paris"}}}, {}}
	for i, r := range recs {
		if !reflect.DeepEqual(r.Logprobs, want[i]) || !reflect.DeepEqual(r.AnswerLogprobs, wantAnswer[i]) {
			t.Errorf("row %d: logprobs %#v, answer %#v; want %+v, %+v", i+1, r.Logprobs, r.AnswerLogprobs, want[i], wantAnswer[i])
		}
	}
	// A bad log-probability names its row and place, as in JSON Lines.
	writeParquet(t, p, []pqLogprobsRow{{ID: "q1", Samples: []string{"a"}, Logprobs: [][]pqToken{{{Token: "a", Logprob: 0.5}}}}})
	if _, err := ReadRecords(p); err == nil || !strings.Contains(err.Error(), "logprobs[0][0].logprob") || !strings.Contains(err.Error(), "row 1") {
		t.Errorf("a positive logprob: %v", err)
	}
}

// The texts a Parquet file's rows hold once decoded are bounded as its
// columns' declared sizes are: a text repeated through a
// dictionary-encoded column is spelled once in the file, however many
// rows repeat it, and is refused past MaxCompressionRatio times the
// file's size (past the floor).
func TestReadParquetTextBound(t *testing.T) {
	type tok struct {
		Token   string  `parquet:"token,dict,zstd"`
		Logprob float64 `parquet:"logprob"`
	}
	type row struct {
		Samples  []string `parquet:"samples,list"`
		Logprobs [][]tok  `parquet:"logprobs,list"`
	}
	long := strings.Repeat("x", 4<<10)
	rows := make([]row, 200)
	for i := range rows {
		toks := make([]tok, 20)
		for j := range toks {
			toks[j] = tok{Token: long, Logprob: -1}
		}
		rows[i] = row{Samples: []string{"a"}, Logprobs: [][]tok{toks}}
	}
	p := filepath.Join(t.TempDir(), "dict.parquet")
	writeParquet(t, p, rows) // 16 MB of token texts in a file of a few hundred KB
	withFloor(t, 1<<10)
	_, err := ReadRecords(p)
	wantInputError(t, err, "decode to more than", "dictionary-encoded")
	bombFloor = 64 << 20
	recs, err := ReadRecords(p)
	if err != nil || recs[199].Logprobs[0][19].Text != long {
		t.Errorf("under the floor: %v", err)
	}
}
