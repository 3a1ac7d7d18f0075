package nli

import "testing"

func TestPredict(t *testing.T) {
	for _, c := range []struct {
		p    [3]float64
		want Label
	}{
		{[3]float64{0.1, 0.2, 0.7}, Entailment},
		{[3]float64{0.7, 0.2, 0.1}, Contradiction},
		{[3]float64{0.2, 0.6, 0.2}, Neutral},
		{[3]float64{0.1, 0.45, 0.45}, Neutral},
		{[3]float64{0.5, 0, 0.5}, Contradiction},
		{[3]float64{0, 0, 1}, Entailment},
	} {
		if got := Predict(c.p); got != c.want {
			t.Errorf("Predict(%v) = %v, want %v", c.p, got, c.want)
		}
	}
	if Entailment.String() != "entailment" || Label(7).String() != "unknown" {
		t.Error("Label.String")
	}
}

func TestParseLabel(t *testing.T) {
	for name, want := range map[string]Label{"CONTRADICTION": Contradiction, "Neutral": Neutral, "entailment": Entailment} {
		if got, ok := ParseLabel(name); !ok || got != want {
			t.Errorf("ParseLabel(%q) = %v, %v; want %v", name, got, ok, want)
		}
	}
	for _, name := range []string{"", "entails", "LABEL_0"} {
		if _, ok := ParseLabel(name); ok {
			t.Errorf("ParseLabel(%q) accepted", name)
		}
	}
}
