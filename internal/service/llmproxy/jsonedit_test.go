package llmproxy

import "testing"

// The edits touch only the bytes of the values they change.
func TestJSONEdits(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"model":"m","logprobs":false, "n":2}`, `{"model":"m","logprobs":true, "n":2,"top_logprobs":5}`},
		{`{}`, `{"logprobs":true,"top_logprobs":5}`},
		{` { "top_logprobs" : 1 } ` + "\n", ` { "top_logprobs" : 5 ,"logprobs":true} ` + "\n"},
	} {
		got, err := setKeys([]byte(tc.in), [][2]string{{"logprobs", "true"}, {"top_logprobs", "5"}})
		if err != nil || string(got) != tc.want {
			t.Errorf("setKeys(%s) = %s, %v; want %s", tc.in, got, err, tc.want)
		}
	}
	in := `{"id":"x","choices":[{"index":0,"logprobs":{"content":[{"token":"a","logprob":-1}]},"x":1.50},{"index":1, "logprobs" : null},{"index":2}],"logprobs":7}`
	want := `{"id":"x","choices":[{"index":0,"logprobs":null,"x":1.50},{"index":1, "logprobs" : null},{"index":2}],"logprobs":7}`
	if got, err := blankLogprobs([]byte(in)); err != nil || string(got) != want {
		t.Errorf("blankLogprobs = %s, %v", got, err)
	}
	if _, err := setKeys([]byte(`[1]`), nil); err == nil {
		t.Error("setKeys of an array succeeded")
	}
}
