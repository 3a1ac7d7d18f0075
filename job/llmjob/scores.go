package llmjob

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/genlens/genlens/dataio"
	"github.com/genlens/genlens/internal/format/jsonnum"
	"github.com/genlens/genlens/metric/likelihood"
	"github.com/genlens/genlens/metric/uncertainty"
)

// scoreDef is one score of `genlens entropy`: its {scores} name, its key
// (in the JSON items and summary, and the items.csv column), its label in
// the text, and how it is computed. Scores are declared once, in
// uncertainty.Defs; entropyScores adds what the command needs.
type scoreDef struct {
	name  string
	key   string
	label string
	// confidence marks a score that is higher for surer answers (lexical
	// similarity): the AUROC and the rejection order negate it.
	confidence bool
	// sim is the score of uncertainty.Evaluate this is, "" for a score
	// computed here from value.
	sim uncertainty.Score
	// source is what the score needs besides the rows ("" for nothing):
	// a source missing leaves the score out with a warning.
	source scoreSource
	// needs is what the score reads besides the samples' texts.
	needs uncertainty.Needs
	// value computes the score of one prompt; an error is the reason it
	// is unavailable for that prompt (the rows lack its logprobs).
	value func(p *promptScores) (float64, error)
}

// scoreSource is a source of information a score needs besides the rows.
type scoreSource string

// entropyScores lists every score, in the order of the result's keys and
// columns: uncertainty's table (uncertainty.Defs), with what the command
// needs to compute each from its rows and to say why one is unavailable.
var entropyScores = func() []scoreDef {
	var out []scoreDef
	for _, d := range uncertainty.Defs() {
		out = append(out, scoreDef{name: d.Name, key: d.Key, label: d.Label, confidence: d.Confidence, sim: d.Sim,
			needs: d.Needs, source: sourceOf(d.Needs), value: valueOf(d)})
	}
	return out
}()

// sourceOf is the source a score needing needs reads besides the rows.
func sourceOf(needs uncertainty.Needs) scoreSource {
	switch {
	case needs&(uncertainty.NeedsJudge|uncertainty.NeedsEntailmentProbs|uncertainty.NeedsAnswerEntailmentProbs|uncertainty.NeedsAlternativesEntailment) != 0:
		return sourceNLI
	case needs&(uncertainty.NeedsModel|uncertainty.NeedsQuestion) != 0:
		return sourceModel
	}
	return ""
}

// valueOf computes d from a prompt's scores, its reasons said for the
// command's reader: which field would have given the logprobs it lacks.
func valueOf(d uncertainty.Def) func(p *promptScores) (float64, error) {
	switch {
	case d.Sim != "":
		return nil
	case d.Needs&uncertainty.NeedsModel != 0:
		return func(p *promptScores) (float64, error) { return p.ptrue, p.ptrueErr }
	case d.Needs&uncertainty.NeedsQuestion != 0:
		return func(p *promptScores) (float64, error) {
			return d.Value(uncertainty.Input{Replies: p.replies[d.Name], RepliesErr: p.repliesErr[d.Name]})
		}
	}
	return func(p *promptScores) (float64, error) {
		if d.Needs&uncertainty.NeedsSampleLogprobs != 0 {
			if err := p.needSamples(); err != nil {
				return 0, err
			}
		}
		if d.Needs&uncertainty.NeedsAnswerLogprobs != 0 && p.answer == nil {
			return 0, p.answerMissing
		}
		v, err := d.Value(uncertainty.Input{Logprobs: p.logprobs, Answer: p.answer, Clusters: p.clusters, Samples: p.samples,
			AnswerSim: p.answerSim, SampleSim: p.sampleSim, SimErr: p.simErr, SampleNLI: p.sampleNLI, AnswerNLI: p.answerNLI,
			AnswerTokenSim: p.answerTokenSim, SampleTokenSim: p.sampleTokenSim, TokenSimErr: p.tokenSimErr, CCP: p.ccp, CCPErr: p.ccpErr})
		switch {
		case err == nil && (math.IsInf(v, 0) || math.IsNaN(v)):
			// Finite logprobs can sum past float64 (-1e308 twice): such
			// a score ranks nothing, so it is null with why, like a
			// missing one, not the most uncertain of all.
			return 0, errNotFinite
		case err == nil:
			return v, nil
		case errors.Is(err, likelihood.ErrNoTop):
			return 0, errNoTop
		case errors.Is(err, likelihood.ErrNoLogprobs):
			return 0, replaceCause(err, likelihood.ErrNoLogprobs, errNoLogprobs)
		}
		return 0, err
	}
}

// replaceCause is err with its cause old said as new: likelihood's
// reasons name the request's fields, the command's name its flags.
func replaceCause(err, old, new error) error {
	return &causeError{msg: strings.Replace(err.Error(), old.Error(), new.Error(), 1), err: new}
}

type causeError struct {
	msg string
	err error
}

func (e *causeError) Error() string { return e.msg }
func (e *causeError) Unwrap() error { return e.err }

// defaultScoreNames are the scores of a request without {scores}.
var defaultScoreNames = []string{"kernel-entropy", "lexsim"}

// scoreByName returns the table entry of a {scores} name, nil for none.
func scoreByName(name string) *scoreDef {
	for i := range entropyScores {
		if entropyScores[i].name == name {
			return &entropyScores[i]
		}
	}
	return nil
}

// scoreByKey returns the table entry of a result key, nil for none.
func scoreByKey(key string) *scoreDef {
	for i := range entropyScores {
		if entropyScores[i].key == key {
			return &entropyScores[i]
		}
	}
	return nil
}

// ScoreNames returns the names of the score table, comma-separated.
func ScoreNames() string { return strings.Join(scoreNames(), ", ") }

func scoreNames() []string {
	names := make([]string, len(entropyScores))
	for i, s := range entropyScores {
		names[i] = s.name
	}
	return names
}

// simScores returns the scores of uncertainty.Evaluate among defs.
func simScores(defs []*scoreDef) []uncertainty.Score {
	var out []uncertainty.Score
	for _, d := range defs {
		if d.sim != "" {
			out = append(out, d.sim)
		}
	}
	return out
}

// promptScores is what the scores computed here read of one prompt: the
// scored samples and their tokens, the tokens of the answer under test.
type promptScores struct {
	question string // what the samples answer, for the entailment judge
	samples  []string
	// answerText is the answer under test, nil when unknown.
	answerText *string
	logprobs   [][]likelihood.Token // of samples; nil when the row has none
	answer     []likelihood.Token   // of the answer under test; nil when unknown
	// answerMissing says why answer is nil.
	answerMissing error
	// clusters are the samples' clusters by bidirectional entailment;
	// nil unless a score needs them.
	clusters []int
	// ptrue is 1 − p(True) of the answer under test, or ptrueErr why
	// not.
	ptrue    float64
	ptrueErr error
	// replies are the model's replies to each question score's question
	// (llm.Questions), or repliesErr why there are none.
	replies    map[string][]string
	repliesErr map[string]error
	// The run's similarity of the answer under test with each sample and
	// of the samples with each other, or simErr why not; nil unless a
	// score needs them.
	answerSim []float64
	sampleSim mat.Matrix
	simErr    error
	// The judge's label probabilities of the ordered pairs of samples
	// and of (answer under test, sample); nil unless a score needs them.
	sampleNLI [][][3]float64
	answerNLI [][3]float64
	// answerNLIBack holds those of (sample, answer under test), for the
	// nli similarity of the answer with the samples.
	answerNLIBack [][3]float64

	// The texts of the tokens of the answer under test and of the scored
	// samples, nil when a token has none; answerCands the answer's
	// tokens with their alternatives as CCP reads them, or candsErr why
	// not.
	answerTexts []string
	sampleTexts [][]string
	answerCands []uncertainty.CCPCandidate
	candsErr    error
	// The run's similarity of the answer under test and of each scored
	// sample with itself without each of its tokens, or tokenSimErr why
	// not; the tokens of CCP, or ccpErr why not. nil unless a score
	// needs them.
	answerTokenSim []float64
	sampleTokenSim [][]float64
	tokenSimErr    error
	ccp            []uncertainty.CCPToken
	ccpErr         error
}

// Reasons a score is unavailable for a prompt, rendered for the reader.
var (
	errNoLogprobs       = errors.New("no token logprobs (sample with {logprobs}; the endpoint may ignore it)")
	errNoAnswerLogprobs = errors.New("no answer_logprobs for the answer under test (sample with {greedy} and {logprobs}, or set {holdout_first} to test the first sample)")
	errNoTop            = errors.New("no top-K alternatives of the tokens (sample with {top_logprobs} K)")
	errNotFinite        = errors.New("not finite: the row's token logprobs are too far below 0 to add up in float64 (a logprob near -1e308); check what the sampling server returned")
)

func (p *promptScores) needSamples() error {
	if p.logprobs == nil {
		return errNoLogprobs
	}
	return nil
}

// newPromptScores reads the tokens of one row. With holdoutFirst the
// answer under test is the first sample and the others are scored.
func newPromptScores(r dataio.Record, holdoutFirst bool) *promptScores {
	p := &promptScores{question: r.Question, samples: r.Samples, answerText: r.Answer, answerMissing: errNoAnswerLogprobs}
	lps := r.Logprobs
	var answer []dataio.Token
	if holdoutFirst && len(p.samples) > 0 {
		p.answerText = &p.samples[0]
		p.samples = p.samples[1:]
		if lps != nil {
			answer = lps[0]
			lps = lps[1:]
		} else {
			p.answerMissing = errNoLogprobs
		}
	} else if r.AnswerLogprobs != nil {
		answer = r.AnswerLogprobs
	}
	p.candsErr = p.answerMissing
	if answer != nil {
		p.answer = tokens(answer)
		p.answerTexts = tokenTexts(answer)
		p.answerCands, p.candsErr = ccpCandidates(answer)
	}
	if lps != nil {
		p.logprobs = make([][]likelihood.Token, len(lps))
		p.sampleTexts = make([][]string, len(lps))
		for i, t := range lps {
			p.logprobs[i] = tokens(t)
			if p.sampleTexts != nil {
				if p.sampleTexts[i] = tokenTexts(t); p.sampleTexts[i] == nil {
					p.sampleTexts = nil
				}
			}
		}
	}
	return p
}

func tokens(ts []dataio.Token) []likelihood.Token {
	out := make([]likelihood.Token, len(ts))
	for i, t := range ts {
		out[i] = likelihood.Token{Logprob: t.Logprob, Top: t.Top}
	}
	return out
}

// ScoreValues holds a value for each score of a result, by key (nil for
// null); a score not asked for, or left out, has no entry. It marshals in
// the order of the score table.
type ScoreValues map[string]*jsonnum.Num

// MarshalJSON writes the entries in the order of the score table.
func (v ScoreValues) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	if err := v.appendEntries(&b, false); err != nil {
		return nil, err
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

func (v ScoreValues) appendEntries(b *bytes.Buffer, comma bool) error {
	for _, d := range entropyScores {
		n, ok := v[d.key]
		if !ok {
			continue
		}
		if comma {
			b.WriteByte(',')
		}
		comma = true
		nb, err := json.Marshal(n)
		if err != nil {
			return fmt.Errorf("%s: %w", d.key, err)
		}
		b.WriteString(`"` + d.key + `":`)
		b.Write(nb)
	}
	return nil
}

// keys returns the keys of the entries, in the order of the score table.
func (v ScoreValues) keys() []string {
	var out []string
	for _, d := range entropyScores {
		if _, ok := v[d.key]; ok {
			out = append(out, d.key)
		}
	}
	return out
}

// MarshalJSON writes the item's id, its scores in the order of the score
// table, then correct and reason.
func (it EntropyItem) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	id, err := json.Marshal(it.ID)
	if err != nil {
		return nil, err
	}
	b.WriteString(`{"id":`)
	b.Write(id)
	if err := it.Scores.appendEntries(&b, true); err != nil {
		return nil, err
	}
	c, _ := json.Marshal(it.Correct)
	b.WriteString(`,"correct":`)
	b.Write(c)
	if it.Reason != "" {
		r, _ := json.Marshal(it.Reason)
		b.WriteString(`,"reason":`)
		b.Write(r)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// UnmarshalJSON reads what MarshalJSON writes; keys that are no score are
// ignored.
func (it *EntropyItem) UnmarshalJSON(data []byte) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil {
		return err
	}
	*it = EntropyItem{}
	for k, raw := range m {
		var err error
		switch k {
		case "id":
			err = json.Unmarshal(raw, &it.ID)
		case "correct":
			err = json.Unmarshal(raw, &it.Correct)
		case "reason":
			err = json.Unmarshal(raw, &it.Reason)
		default:
			if scoreByKey(k) == nil {
				continue
			}
			var n *jsonnum.Num
			if err = json.Unmarshal(raw, &n); err == nil {
				if it.Scores == nil {
					it.Scores = ScoreValues{}
				}
				it.Scores[k] = n
			}
		}
		if err != nil {
			return fmt.Errorf("%s: %w", k, err)
		}
	}
	return nil
}

// scoreReasonGroups joins the scores unavailable for the same reason:
// "pe, ne: reason; se: reason".
func scoreReasonGroups(names []string, reasons []string) string {
	var order []string
	by := map[string][]string{}
	for i, n := range names {
		if _, ok := by[reasons[i]]; !ok {
			order = append(order, reasons[i])
		}
		by[reasons[i]] = append(by[reasons[i]], n)
	}
	parts := make([]string, len(order))
	for i, r := range order {
		parts[i] = strings.Join(by[r], ", ") + ": " + r
	}
	return strings.Join(parts, "; ")
}

// containsScore reports whether defs holds the score called name.
func containsScore(defs []*scoreDef, name string) bool {
	return slices.ContainsFunc(defs, func(d *scoreDef) bool { return d.name == name })
}
