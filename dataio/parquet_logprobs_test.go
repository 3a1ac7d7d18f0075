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
	want := [][][]Token{{{{Logprob: -0.25, Top: []float64{-0.25, -1.5}}}, {{Logprob: -1.5}, {Logprob: -0.125}}}, nil}
	// An empty list is an answer of no tokens, as in JSON Lines (its
	// scores are unavailable all the same).
	wantAnswer := [][]Token{{{Logprob: -0.5, Top: []float64{-0.5}}}, {}}
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
