package uncertainty

import (
	"encoding/json"
	"errors"
	"math"
	"os"
	"testing"
)

// TestVerbalizedReference reads the replies of testdata/polygraph_replies.json
// as LM-Polygraph's Verbalized1S, Verbalized2S, Linguistic1S and
// PTrueEmpirical read them (with the regular expression and expressions of
// confidence of its configurations; written by make_polygraph_expected.py
// with its code): equal where it gives a number, ErrNoConfidence where it
// gives NaN, but for "We Believe", which genlens reads beside
// LM-Polygraph's "We Beleive".
func TestVerbalizedReference(t *testing.T) {
	b, err := os.ReadFile("testdata/polygraph_replies.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Regex       string `json:"confidence_regex"`
		Expressions [][2]json.RawMessage
		Replies     []struct {
			Reply                      string
			Verbalized1S, Verbalized2S *float64
			Linguistic                 *float64 `json:"Linguistic1S"`
		}
		PTrueEmpirical []struct {
			Replies        []string
			PTrueEmpirical float64
		} `json:"ptrue_empirical"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Regex != `Probability: (\d+\.\d+)` || VerbalizedPattern.String() != `Probability: (\p{Nd}+\.\p{Nd}+)` {
		t.Errorf("LM-Polygraph's expression %q, genlens's %q", doc.Regex, VerbalizedPattern)
	}
	// The expressions in LM-Polygraph's order, "We Believe" added.
	var i int
	for _, e := range doc.Expressions {
		var text string
		var p float64
		if json.Unmarshal(e[0], &text) != nil || json.Unmarshal(e[1], &p) != nil {
			t.Fatalf("bad expression %s", e)
		}
		if Expressions[i].Text == "We Believe" {
			i++
		}
		if Expressions[i] != (Expression{text, p}) {
			t.Errorf("expression %d: %v, LM-Polygraph's %q %v", i, Expressions[i], text, p)
		}
		i++
	}
	if i != len(Expressions) {
		t.Errorf("%d expressions, LM-Polygraph's %d and We Believe", len(Expressions), len(doc.Expressions))
	}
	check := func(reply, what string, got float64, err error, want *float64) {
		t.Helper()
		switch {
		case want == nil && reply == "We Believe so" && what == "Linguistic1S" && err == nil && math.Abs(got-0.25) < 1e-15:
		case want == nil && !errors.Is(err, ErrNoConfidence):
			t.Errorf("%q: %s = %v, %v; LM-Polygraph's NaN", reply, what, got, err)
		case want != nil && (err != nil || got != *want):
			t.Errorf("%q: %s = %v, %v; LM-Polygraph's %v", reply, what, got, err, *want)
		}
	}
	for _, r := range doc.Replies {
		v, err := Verbalized(r.Reply)
		check(r.Reply, "Verbalized1S", v, err, r.Verbalized1S)
		check(r.Reply, "Verbalized2S", v, err, r.Verbalized2S)
		v, err = Linguistic(r.Reply)
		check(r.Reply, "Linguistic1S", v, err, r.Linguistic)
	}
	for _, c := range doc.PTrueEmpirical {
		if v, err := PTrueEmpirical(c.Replies); err != nil || math.Abs(v-c.PTrueEmpirical) > 1e-15 {
			t.Errorf("%q: PTrueEmpirical = %v, %v; LM-Polygraph's %v", c.Replies, v, err, c.PTrueEmpirical)
		}
	}
}

// TestVerbalizedByHand: the scores of a few replies worked by hand.
func TestVerbalizedByHand(t *testing.T) {
	for _, c := range []struct {
		name string
		f    func() (float64, error)
		want float64
	}{
		{"verbalized", func() (float64, error) { return Verbalized("Guess: Rome\nProbability: 0.25\n") }, 0.75},
		{"first of two", func() (float64, error) { return Verbalized("Probability: 0.5, or Probability: 0.75") }, 0.5},
		{"arabic-indic digits", func() (float64, error) { return Verbalized("Probability: ٠.٥") }, 0.5},
		{"linguistic", func() (float64, error) { return Linguistic("Guess: Rome\nConfidence: Very Good Chance") }, 1 - 0.8},
		{"linguistic, an earlier expression inside", func() (float64, error) { return Linguistic("Confidence: Probably Not") }, 1 - 0.7},
		{"ptrue-empirical", func() (float64, error) { return PTrueEmpirical([]string{" True", " False", " True", "True"}) }, 0.25},
	} {
		if v, err := c.f(); err != nil || math.Abs(v-c.want) > 1e-15 {
			t.Errorf("%s: %v, %v; want %v", c.name, v, err, c.want)
		}
	}
	for name, f := range map[string]func() (float64, error){
		"no probability":  func() (float64, error) { return Verbalized("Probability: 1") },
		"no expression":   func() (float64, error) { return Linguistic("I am sure") },
		"ptrue no sample": func() (float64, error) { return PTrueEmpirical(nil) },
	} {
		if v, err := f(); err == nil {
			t.Errorf("%s: %v, want an error", name, v)
		}
	}
}
