package llm

import (
	"context"
	"errors"
	"io/fs"
	"math"
	"strings"

	"github.com/genlens/genlens/fault"
)

// p(True) asks the model that sampled whether an answer is true, after
// Kadavath et al., "Language Models (Mostly) Know What They Know" (2022).

// PTruePrompt is the question p(True) puts to the model, after Kadavath
// et al., "Language Models (Mostly) Know What They Know" (2022): the
// question, the sampled answers as brainstormed ideas (one a line), and
// the answer under test. {question}, {samples} and {answer} are replaced;
// a template of {ptrue_prompt} must hold {answer}.
const PTruePrompt = `Question: {question}
Here are some brainstormed ideas: {samples}
Proposed Answer: {answer}
Is the proposed answer:
 (A) True
 (B) False
The proposed answer is:`

// PTrueTopLogprobs is the alternatives asked of the answer's first
// token: the most the OpenAI API returns, so that " True" is among them
// whenever it is likely at all.
const PTrueTopLogprobs = 20

// PTrueText fills a p(True) template: the question, the sampled answers
// and the answer under test.
func PTrueText(template, question string, samples []string, answer string) string {
	return strings.NewReplacer("{question}", question, "{samples}", strings.Join(samples, "\n"), "{answer}", answer).Replace(template)
}

// ReadPTruePrompt returns the template of {ptrue_prompt} read from fsys,
// PTruePrompt when it is "": a template without {answer} is refused.
func ReadPTruePrompt(fsys fs.FS, path string) (string, error) {
	if path == "" {
		return PTruePrompt, nil
	}
	b, err := fs.ReadFile(fsys, path)
	if err != nil {
		return "", &fault.InputError{File: path, Msg: "cannot read: " + pathErrText(err), Err: err}
	}
	t := string(b)
	if !strings.Contains(t, "{answer}") {
		return "", &fault.InputError{File: path, Msg: "a p(True) template must place the proposed answer, and this one has no placeholder for it (the word answer in braces)"}
	}
	return t, nil
}

// PTrueOf reads p(True) from the tokens of a model's answer to the p(True)
// question: the probability of "True" as its first token, the sum over
// the first token and its top alternatives of those that read "True" once
// surrounding space is trimmed (" True" and "True" are different tokens
// of the same answer). When none of them does, the probability is below
// the least likely alternative and counts as 0. Without tokens (the
// endpoint sent no logprobs) it returns an error.
func PTrueOf(toks []TokenLogprob) (float64, error) {
	if len(toks) == 0 {
		return 0, errors.New("the model sent no logprobs for the p(True) question")
	}
	seen := map[string]bool{}
	var p float64
	add := func(tok string, lp float64) {
		if seen[tok] {
			return
		}
		seen[tok] = true
		if strings.TrimSpace(tok) == "True" {
			p += math.Exp(lp)
		}
	}
	add(toks[0].Token, toks[0].Logprob)
	for _, a := range toks[0].Top {
		add(a.Token, a.Logprob)
	}
	return min(p, 1), nil
}

// AskPTrue puts the p(True) question text to model through client (its
// completions API when completions is set, else chat), at temperature 0
// for one token with PTrueTopLogprobs alternatives, and returns that
// token's logprobs for PTrueOf: none when the endpoint sends none.
func AskPTrue(ctx context.Context, client *Client, model string, completions bool, text string) ([]TokenLogprob, error) {
	zero := 0.0
	var (
		choices []Choice
		err     error
	)
	if completions {
		choices, _, err = client.Complete(ctx, CompletionRequest{Model: model, Prompt: text, Temperature: &zero, MaxTokens: 1,
			Logprobs: true, TopLogprobs: PTrueTopLogprobs})
	} else {
		choices, _, err = client.Chat(ctx, ChatRequest{Model: model, Temperature: &zero, MaxTokens: 1,
			Messages: []Message{{Role: "user", Content: text}}, Logprobs: true, TopLogprobs: PTrueTopLogprobs})
	}
	if err != nil {
		return nil, err
	}
	return choices[0].Tokens, nil
}

// pathErrText is the cause of a failure to read a file, without the path
// the caller names itself.
func pathErrText(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}
