package dataio

import (
	"fmt"
	"math"
)

// Token is one generated token of a sampled answer as `genlens sample
// --logprobs` stores it: its natural-log probability and those of the
// top-K alternatives the endpoint reported (nil when none were asked),
// and their texts.
type Token struct {
	Logprob float64
	Top     []float64
	// Text is the token's text (its "token"), when HasText; a row written
	// by another tool may give only the log-probabilities.
	Text    string
	HasText bool
	// TopText holds the alternatives' texts, one for each entry of Top;
	// nil when an alternative has none.
	TopText []string
}

// logprobs reads the optional "logprobs" (one token list per sample) and
// "answer_logprobs" (the token list of the answer) of a row. A
// log-probability must be a finite number not above 0: a bad one is an
// error naming its place, never a value read as 0.
func (d *recordDecoder) logprobs(line int, m map[string]any, rec *Record) error {
	if v := m["logprobs"]; v != nil {
		list, ok := v.([]any)
		if !ok {
			return d.src.errf(line, "logprobs", "want a list of token lists (one per sample), got "+typeName(v))
		}
		if len(list) > 0 {
			if len(list) != len(rec.Samples) {
				return d.src.errf(line, "logprobs", fmt.Sprintf("has %d token lists but samples has %d entries; want one per sample", len(list), len(rec.Samples)))
			}
			rec.Logprobs = make([][]Token, len(list))
			for i, e := range list {
				toks, err := d.tokens(line, fmt.Sprintf("logprobs[%d]", i), e)
				if err != nil {
					return err
				}
				rec.Logprobs[i] = toks
			}
		}
	}
	if v := m["answer_logprobs"]; v != nil {
		toks, err := d.tokens(line, "answer_logprobs", v)
		if err != nil {
			return err
		}
		rec.AnswerLogprobs = toks
	}
	return nil
}

// tokens reads one answer's list of {"token", "logprob", "top"?}; an
// empty answer has an empty, non-nil list. A "token" is optional (null
// or absent: no text), but when given must be a string; its text and its
// alternatives' are priced as the samples' are (recordDecoder.keepText).
func (d *recordDecoder) tokens(line int, field string, v any) ([]Token, error) {
	list, ok := v.([]any)
	if !ok {
		return nil, d.src.errf(line, field, "want a list of tokens, got "+typeName(v))
	}
	out := make([]Token, len(list))
	for j, e := range list {
		f := fmt.Sprintf("%s[%d]", field, j)
		obj, ok := e.(map[string]any)
		if !ok {
			return nil, d.src.errf(line, f, `want an object {"token", "logprob"}, got `+typeName(e))
		}
		lp, err := d.logprob(line, f+".logprob", obj["logprob"])
		if err != nil {
			return nil, err
		}
		out[j].Logprob = lp
		if out[j].Text, out[j].HasText, err = d.tokenText(line, f+".token", obj["token"]); err != nil {
			return nil, err
		}
		switch top := obj["top"].(type) {
		case nil:
		case []any:
			texts := make([]string, 0, len(top))
			for k, a := range top {
				af := fmt.Sprintf("%s.top[%d]", f, k)
				ao, ok := a.(map[string]any)
				if !ok {
					return nil, d.src.errf(line, af, `want an object {"token", "logprob"}, got `+typeName(a))
				}
				alp, err := d.logprob(line, af+".logprob", ao["logprob"])
				if err != nil {
					return nil, err
				}
				out[j].Top = append(out[j].Top, alp)
				t, has, err := d.tokenText(line, af+".token", ao["token"])
				if err != nil {
					return nil, err
				}
				if has && texts != nil {
					texts = append(texts, t)
				} else {
					texts = nil
				}
			}
			if len(texts) > 0 {
				out[j].TopText = texts
			}
		default:
			return nil, d.src.errf(line, f+".top", "want a list of alternatives, got "+typeName(top))
		}
	}
	return out, nil
}

// tokenText reads a token's optional text: absent or null is none, a
// string is kept (and priced), anything else is an error.
func (d *recordDecoder) tokenText(line int, field string, v any) (string, bool, error) {
	if v == nil {
		return "", false, nil
	}
	s, ok := toString(v)
	if !ok {
		return "", false, d.src.errf(line, field, "want the token's text, a string, got "+typeName(v))
	}
	if err := d.keepText(line, field, s); err != nil {
		return "", false, err
	}
	return s, true, nil
}

func (d *recordDecoder) logprob(line int, field string, v any) (float64, error) {
	if v == nil {
		return 0, d.src.errf(line, field, "missing (want a log-probability, a number not above 0)")
	}
	f, ok := toFloat(v)
	switch {
	case !ok:
		return 0, d.src.errf(line, field, "want a number, got "+typeName(v))
	case math.IsNaN(f) || math.IsInf(f, 0):
		return 0, d.src.errf(line, field, "is "+fmtNonFinite(f))
	case f > 0:
		return 0, d.src.errf(line, field, fmt.Sprintf("%v is above 0, not a log-probability", f))
	}
	return f, nil
}

// question reads the text a row's answers answer: its "prompt", or the
// content of the last user message of its "messages" ("" when neither is
// a string).
func question(m map[string]any) string {
	if p, ok := toString(m["prompt"]); ok {
		return p
	}
	msgs, _ := m["messages"].([]any)
	for i := len(msgs) - 1; i >= 0; i-- {
		msg, _ := msgs[i].(map[string]any)
		if role, _ := toString(msg["role"]); role != "user" {
			continue
		}
		if c, ok := toString(msg["content"]); ok {
			return c
		}
		return ""
	}
	return ""
}
