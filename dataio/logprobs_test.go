package dataio

import (
	"reflect"
	"strings"
	"testing"
)

func TestDecodeLogprobs(t *testing.T) {
	in := `{"id": "q", "prompt": "Capital of France?", "samples": ["Paris", ""], "logprobs": [[{"token": "Par", "logprob": -0.5, "top": [{"token": "Par", "logprob": -0.5}, {"token": "Ly", "logprob": -1}]}, {"token": "is", "logprob": 0}], []], "answer_logprobs": [{"token": "Paris", "logprob": -0.25}]}` + "\n" +
		`{"id": "m", "messages": [{"role": "system", "content": "be brief"}, {"role": "user", "content": "Why?"}, {"role": "assistant", "content": "x"}], "samples": ["a"]}` + "\n"
	recs, err := decodeJSONL(src{file: "r.jsonl"}, strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	want := Record{ID: "q", Samples: []string{"Paris", ""}, Question: "Capital of France?", Line: 1,
		Logprobs: [][]Token{{{Logprob: -0.5, Top: []float64{-0.5, -1}, Text: "Par", HasText: true, TopText: []string{"Par", "Ly"}},
			{Logprob: 0, Text: "is", HasText: true}}, {}},
		AnswerLogprobs: []Token{{Logprob: -0.25, Text: "Paris", HasText: true}}}
	if !reflect.DeepEqual(recs[0], want) {
		t.Errorf("got\n%+v\nwant\n%+v", recs[0], want)
	}
	if recs[1].Question != "Why?" || recs[1].Logprobs != nil || recs[1].AnswerLogprobs != nil {
		t.Errorf("messages row: %+v", recs[1])
	}
}

func TestDecodeLogprobsErrors(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"not a list", `{"samples": ["a"], "logprobs": 3}`, "logprobs: want a list of token lists"},
		{"count", `{"samples": ["a", "b"], "logprobs": [[]]}`, "logprobs: has 1 token lists but samples has 2"},
		{"positive", `{"samples": ["a"], "logprobs": [[{"token": "a", "logprob": 0.5}]]}`, "logprobs[0][0].logprob: 0.5 is above 0"},
		{"missing", `{"samples": ["a"], "logprobs": [[{"token": "a"}]]}`, "logprobs[0][0].logprob: missing"},
		{"NaN", `{"samples": ["a"], "answer_logprobs": [{"token": "a", "logprob": NaN}]}`, "answer_logprobs[0].logprob: is NaN"},
		{"string", `{"samples": ["a"], "answer_logprobs": [{"token": "a", "logprob": "-1"}]}`, "answer_logprobs[0].logprob: want a number, got a string"},
		{"bad top", `{"samples": ["a"], "logprobs": [[{"token": "a", "logprob": -1, "top": [{"token": "b", "logprob": 1}]}]]}`, "logprobs[0][0].top[0].logprob: 1 is above 0"},
		{"token not object", `{"samples": ["a"], "logprobs": [[-1]]}`, `logprobs[0][0]: want an object`},
		{"token text", `{"samples": ["a"], "logprobs": [[{"token": 7, "logprob": -1}]]}`, `logprobs[0][0].token: want the token's text, a string, got a number`},
		{"alternative text", `{"samples": ["a"], "answer_logprobs": [{"token": "a", "logprob": -1, "top": [{"token": ["a"], "logprob": -1}]}]}`, `answer_logprobs[0].top[0].token: want the token's text, a string, got a list`},
	}
	for _, tc := range tests {
		_, err := decodeJSONL(src{file: "r.jsonl"}, strings.NewReader(tc.in))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
	}
}

// A token's text is optional: without one (absent or null) the token has
// none, and the alternatives have texts only when every one has its own.
// An empty text is a text.
func TestDecodeTokenTexts(t *testing.T) {
	in := `{"samples": ["a"], "answer_logprobs": [` +
		`{"logprob": -1, "top": [{"token": "a", "logprob": -1}, {"logprob": -2}]}, ` +
		`{"token": null, "logprob": -1, "top": [{"token": null, "logprob": -1}, {"token": "b", "logprob": -2}]}, ` +
		`{"token": "", "logprob": -1, "top": [{"token": "", "logprob": -1}, {"token": "\u00e9", "logprob": -3}]}]}`
	recs, err := decodeJSONL(src{file: "r.jsonl"}, strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	want := []Token{{Logprob: -1, Top: []float64{-1, -2}}, {Logprob: -1, Top: []float64{-1, -2}},
		{Logprob: -1, Top: []float64{-1, -3}, HasText: true, TopText: []string{"", "é"}}}
	if !reflect.DeepEqual(recs[0].AnswerLogprobs, want) {
		t.Errorf("got %+v\nwant %+v", recs[0].AnswerLogprobs, want)
	}
}
