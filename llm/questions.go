package llm

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"strings"

	"github.com/genlens/genlens/fault"
)

// The questions below ask the model about its own answer, once per
// prompt, for the verbalized confidence of Tian et al., "Just Ask for
// Calibration: Strategies for Eliciting Calibrated Confidence Scores from
// Language Models Fine-Tuned with Human Feedback" (EMNLP 2023), and the
// empirical p(True) of Kadavath et al., "Language Models (Mostly) Know
// What They Know" (2022), as LM-Polygraph's Verbalized1S, Verbalized2S,
// Linguistic1S and PTrueEmpirical ask them. The wording is genlens's; the
// forms asked for ("Probability: 0.8", an expression of confidence) are
// those the scores parse (package uncertainty).

// Question is one such question: its template, how it is asked and how
// many replies it wants.
type Question struct {
	// Score is the score that reads the replies ("verbalized-1s").
	Score string
	// Template is the default text; {question} and {answer} are replaced
	// by the prompt's question and the answer under test.
	Template string
	// Needs are the placeholders a template of the question must hold.
	Needs []string
	// FollowUp asks the template as the next user turn of a chat whose
	// first turns are the question and the answer under test, as the
	// model's own (Verbalized2S); otherwise the template is the one user
	// turn (or the completions prompt).
	FollowUp bool
	// N is the number of replies sampled, at Temperature; MaxTokens
	// bounds each.
	N           int
	Temperature float64
	MaxTokens   int
}

// PTrueEmpiricalSamples is the replies ptrue-empirical samples, as
// LM-Polygraph's PTrueEmpirical does by default.
const PTrueEmpiricalSamples = 10

// Questions lists the questions, by score.
var Questions = []Question{
	{Score: "ptrue-empirical", Needs: []string{"{answer}"}, N: PTrueEmpiricalSamples, Temperature: 1, MaxTokens: 1,
		Template: `Question: {question}
Proposed answer: {answer}
Is the proposed answer true or false? Reply with one word, True or False.
The proposed answer is:`},
	{Score: "verbalized-1s", Needs: []string{"{question}"}, N: 1, MaxTokens: 30,
		Template: `Give your best guess for the question below and the probability, between 0.0 and 1.0, that your guess is correct. Reply in exactly this form, with nothing else:

Guess: <your guess, as short as possible>
Probability: <a number between 0.0 and 1.0>

Question: {question}`},
	{Score: "verbalized-2s", FollowUp: true, N: 1, MaxTokens: 10,
		Template: `What is the probability, between 0.0 and 1.0, that your answer is correct? Reply in exactly this form, with nothing else:

Probability: <a number between 0.0 and 1.0>`},
	{Score: "linguistic-1s", Needs: []string{"{question}"}, N: 1, MaxTokens: 40,
		Template: `Give your best guess for the question below, and say how likely it is that your guess is correct with one of these expressions: Almost Certain, Highly Likely, Very Good Chance, We Believe, Probably, Probable, Likely, Better than Even, About Even, Probably Not, We Doubt, Unlikely, Little Chance, Chances Are Slight, Improbable, Highly Unlikely, Almost No Chance. Reply in exactly this form, with nothing else:

Guess: <your guess, as short as possible>
Confidence: <one of the expressions>

Question: {question}`},
}

// QuestionOf returns the question of score, false for none.
func QuestionOf(score string) (Question, bool) {
	for _, q := range Questions {
		if q.Score == score {
			return q, true
		}
	}
	return Question{}, false
}

// Text fills the question's template t with the question and the answer
// under test.
func (q Question) Text(t, question, answer string) string {
	return strings.NewReplacer("{question}", question, "{answer}", answer).Replace(t)
}

// ReadTemplate returns the template of the file path read from fsys, the
// question's own when path is "": a template without a placeholder the
// question needs is refused.
func (q Question) ReadTemplate(fsys fs.FS, path string) (string, error) {
	if path == "" {
		return q.Template, nil
	}
	b, err := fs.ReadFile(fsys, path)
	if err != nil {
		return "", &fault.InputError{File: path, Msg: "cannot read: " + pathErrText(err), Err: err}
	}
	t := string(b)
	for _, p := range q.Needs {
		if !strings.Contains(t, p) {
			return "", &fault.InputError{File: path, Msg: "a template of " + q.Score + " must place the " + strings.Trim(p, "{}") + ", and this one has no placeholder for it (the word " + strings.Trim(p, "{}") + " in braces)"}
		}
	}
	return t, nil
}

// Ask puts the question, its template t filled, to model through client
// (its completions API when completions is set, else chat) and returns
// the texts of the replies, as many as the server returned. A follow-up
// question is asked in a chat only; ask it with completions and Ask
// returns ErrFollowUpCompletions.
func (q Question) Ask(ctx context.Context, client *Client, model string, completions bool, t, question, answer string) ([]string, error) {
	temp := q.Temperature
	text := q.Text(t, question, answer)
	var (
		choices []Choice
		err     error
	)
	switch {
	case q.FollowUp && completions:
		return nil, ErrFollowUpCompletions
	case completions:
		choices, _, err = client.Complete(ctx, CompletionRequest{Model: model, Prompt: text, N: q.N, Temperature: &temp, MaxTokens: q.MaxTokens})
	case q.FollowUp:
		choices, _, err = client.Chat(ctx, ChatRequest{Model: model, N: q.N, Temperature: &temp, MaxTokens: q.MaxTokens,
			Messages: []Message{{Role: "user", Content: question}, {Role: "assistant", Content: answer}, {Role: "user", Content: text}}})
	default:
		choices, _, err = client.Chat(ctx, ChatRequest{Model: model, N: q.N, Temperature: &temp, MaxTokens: q.MaxTokens,
			Messages: []Message{{Role: "user", Content: text}}})
	}
	if err != nil {
		return nil, err
	}
	out := make([]string, len(choices))
	for i, c := range choices {
		out[i] = c.Text
	}
	return out, nil
}

// ErrFollowUpCompletions is why a follow-up question is not asked of a
// completions API: it needs the model's answer as the model's own turn.
var ErrFollowUpCompletions = errors.New("the question follows the answer under test in a chat, as the model's own turn, which the completions API has not ({api} chat asks it)")

// Refusal is why a model refused a question, when err says it did: the
// server answered 400 Bad Request or 422 Unprocessable Entity (a model
// that cannot answer such a prompt, as a classifier behind the API, says
// so), which asking again would not change. nil for any other error,
// which the caller treats as a failure (a server down after retries, a
// key refused, a model not found).
func Refusal(err error) error {
	var se *StatusError
	if !errors.As(err, &se) || se.StatusCode != http.StatusBadRequest && se.StatusCode != http.StatusUnprocessableEntity {
		return nil
	}
	msg := se.Status
	if se.Message != "" {
		msg += ": " + se.Message
	}
	return fmt.Errorf("the model refused the question (%s)", msg)
}
