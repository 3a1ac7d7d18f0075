package synth

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
)

// Answer is one prompt of a simulated question-answering model.
type Answer struct {
	ID        string
	Reference string
	// Samples are the model's sampled answers; Samples[0] is the answer
	// under test (judge it against Reference, score the rest).
	Samples []string
	// Embeddings holds one vector per sample: the answer's meaning (one
	// point per distinct answer) plus a little noise, as a sentence
	// embedder would give paraphrases.
	Embeddings [][]float64
	// Knowledge is the probability that a sample is the right answer.
	Knowledge float64
}

var words = strings.Fields(`amber anchor apple arrow aster basil beacon birch bison cedar
cobalt comet coral crane delta ember falcon fern fjord flint garnet glacier harbor hazel
heron indigo iris jasper juniper kestrel lagoon lantern laurel lynx maple marble meadow
mesa nectar nimbus oak onyx orchid osprey pebble pine quartz raven reef saffron sage
sierra slate sparrow spruce summit thistle tundra umber valley vesper willow zephyr`)

// Answers simulates prompts of a model that knows the answer to a
// question with probability Knowledge ~ Beta(0.7, 0.7) (many confident
// questions, many guesses). Each sample is the right answer with that
// probability and otherwise one of four plausible wrong answers; answers
// are one to three words, sometimes with a filler word ("the ..."), so
// exact string matching is not enough to compare them. Embeddings have
// dimension dim.
func Answers(r *rand.Rand, prompts, samples, dim int) []Answer {
	phrase := func() string {
		n := 1 + r.IntN(3)
		p := make([]string, n)
		for i := range p {
			p[i] = words[r.IntN(len(words))]
		}
		return strings.Join(p, " ")
	}
	unit := func() []float64 {
		v := make([]float64, dim)
		var s float64
		for i := range v {
			v[i] = r.NormFloat64()
			s += v[i] * v[i]
		}
		for i := range v {
			v[i] /= math.Sqrt(s)
		}
		return v
	}
	out := make([]Answer, prompts)
	for q := range out {
		truth := phrase()
		options := []string{truth, phrase(), phrase(), phrase(), phrase()}
		centres := make([][]float64, len(options))
		for i := range centres {
			centres[i] = unit()
		}
		know := betaSym(r, 0.7)
		a := Answer{ID: fmt.Sprintf("q%04d", q), Reference: truth, Knowledge: know}
		for s := 0; s < samples; s++ {
			pick := 0
			if r.Float64() >= know {
				pick = 1 + r.IntN(len(options)-1)
			}
			text := options[pick]
			if r.Float64() < 0.2 {
				text = "the " + text
			}
			e := make([]float64, dim)
			for i := range e {
				e[i] = centres[pick][i] + 0.15*r.NormFloat64()/math.Sqrt(float64(dim))
			}
			a.Samples = append(a.Samples, text)
			a.Embeddings = append(a.Embeddings, e)
		}
		out[q] = a
	}
	return out
}

// betaSym draws from Beta(a, a) through two gamma variates.
func betaSym(r *rand.Rand, a float64) float64 {
	x, y := gammaVariate(r, a), gammaVariate(r, a)
	return x / (x + y)
}

// gammaVariate draws Gamma(a, 1) by Marsaglia and Tsang's method, boosted
// for a < 1.
func gammaVariate(r *rand.Rand, a float64) float64 {
	if a < 1 {
		return gammaVariate(r, a+1) * math.Pow(r.Float64(), 1/a)
	}
	d := a - 1.0/3
	c := 1 / math.Sqrt(9*d)
	for {
		x := r.NormFloat64()
		v := 1 + c*x
		if v <= 0 {
			continue
		}
		v = v * v * v
		u := r.Float64()
		if math.Log(u) < 0.5*x*x+d-d*v+d*math.Log(v) {
			return d * v
		}
	}
}
