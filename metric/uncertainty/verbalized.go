package uncertainty

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode"
)

// The scores below read the model's own replies to one more question
// about the prompt: its verbalized confidence (Tian et al., "Just Ask for
// Calibration: Strategies for Eliciting Calibrated Confidence Scores from
// Language Models Fine-Tuned with Human Feedback", EMNLP 2023) and its
// empirical p(True) (Kadavath et al., "Language Models (Mostly) Know What
// They Know", 2022), parsed as LM-Polygraph's Verbalized1S, Verbalized2S,
// Linguistic1S and PTrueEmpirical parse them. Each is one minus a
// confidence; a reply that says no confidence is an error (LM-Polygraph's
// NaN), never 0.

// VerbalizedPattern is the regular expression of the probability in a
// verbalized reply, that of LM-Polygraph's configurations of Verbalized1S
// and Verbalized2S ('Probability: (\d+\.\d+)'); \d there is any decimal
// digit of Unicode, as in Python, and so \p{Nd} here.
var VerbalizedPattern = regexp.MustCompile(`Probability: (\p{Nd}+\.\p{Nd}+)`)

// ErrNoConfidence is why a verbalized or linguistic score is null for a
// prompt: the model's reply holds no confidence the score can read.
var ErrNoConfidence = errors.New("the model's reply states no confidence in the form asked")

// Verbalized is 1 − p for the first probability p of reply that
// VerbalizedPattern matches, as LM-Polygraph's Verbalized1S and
// Verbalized2S compute it. A p above 1 (a percentage) is read as it is,
// as LM-Polygraph reads it, and gives a negative score.
func Verbalized(reply string) (float64, error) {
	m := VerbalizedPattern.FindStringSubmatch(reply)
	if m == nil {
		return 0, fmt.Errorf("%w (no %q)", ErrNoConfidence, "Probability: d.d")
	}
	p, err := strconv.ParseFloat(asciiDigits(m[1]), 64)
	if err != nil {
		return 0, fmt.Errorf("%w (%q: %v)", ErrNoConfidence, m[1], err)
	}
	return 1 - p, nil
}

// asciiDigits spells the decimal digits of s in ASCII, as Python's float
// reads any Unicode decimal digit.
func asciiDigits(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x80 || !unicode.IsDigit(r) {
			return r
		}
		// Unicode lays out each script's decimal digits 0 to 9 in a row,
		// rows of several scripts back to back.
		start := r
		for unicode.IsDigit(start - 1) {
			start--
		}
		return '0' + (r-start)%10
	}, s)
}

// Expression is one expression of confidence a linguistic reply may use,
// with the probability it stands for.
type Expression struct {
	Text        string
	Probability float64
}

// Expressions are the expressions of confidence of Linguistic1S, in the
// order they are looked for, with their probabilities: those of Tian et
// al. (EMNLP 2023) as LM-Polygraph's configurations list them (which spell
// "We Beleive"; "We Believe" is looked for too).
var Expressions = []Expression{
	{"Almost Certain", 0.95}, {"Highly Likely", 0.9}, {"Very Good Chance", 0.8},
	{"We Beleive", 0.75}, {"We Believe", 0.75}, {"Probably", 0.7}, {"Probable", 0.7},
	{"Likely", 0.7}, {"Better than Even", 0.6}, {"About Even", 0.5}, {"Probably Not", 0.25},
	{"We Doubt", 0.2}, {"Unlikely", 0.2}, {"Little Chance", 0.1}, {"Chances Are Slight", 0.1},
	{"Improbable", 0.1}, {"Highly Unlikely", 0.05}, {"Almost No Chance", 0.02},
}

// Linguistic is 1 − the probability of the first of Expressions that
// reply contains (case-sensitively, anywhere), as LM-Polygraph's
// Linguistic1S computes it. Its order is LM-Polygraph's, which it
// follows: an expression that contains an earlier one reads as the
// earlier ("Probably Not" as "Probably", 0.7; "Highly Unlikely" as
// "Unlikely", 0.2).
func Linguistic(reply string) (float64, error) {
	for _, e := range Expressions {
		if strings.Contains(reply, e.Text) {
			return 1 - e.Probability, nil
		}
	}
	return 0, fmt.Errorf("%w (none of the expressions of confidence)", ErrNoConfidence)
}

// PTrueEmpirical is 1 − the share of replies that contain "True" (case
// sensitive, anywhere), as LM-Polygraph's PTrueEmpirical computes it from
// the replies the model sampled, over as many replies as the model
// returned.
func PTrueEmpirical(replies []string) (float64, error) {
	if len(replies) == 0 {
		return 0, errors.New("the model returned no reply")
	}
	n := 0
	for _, r := range replies {
		if strings.Contains(r, "True") {
			n++
		}
	}
	return 1 - float64(n)/float64(len(replies)), nil
}
