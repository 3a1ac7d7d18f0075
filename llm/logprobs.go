package llm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"sort"
)

// MaxTopLogprobs bounds the alternatives asked per token (OpenAI allows
// 20; vLLM's default maximum is 20 too).
const MaxTopLogprobs = 20

// parseLogprobs reads a choice's "logprobs": the chat shape
// {"content": [{token, logprob, top_logprobs}]} or the completions shape
// {tokens, token_logprobs, top_logprobs}. Absent or null gives nil (the
// server did not send them). A log-probability must be a finite number
// not above 0, and the completions shape's lists must be as long as its
// tokens: anything else is an error, never a guessed value.
func parseLogprobs(raw json.RawMessage, chat bool) ([]TokenLogprob, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	if chat {
		var v struct {
			Content *[]struct {
				Token       string          `json:"token"`
				Logprob     json.RawMessage `json:"logprob"`
				TopLogprobs []struct {
					Token   string          `json:"token"`
					Logprob json.RawMessage `json:"logprob"`
				} `json:"top_logprobs"`
			} `json:"content"`
		}
		if err := json.Unmarshal(raw, &v); err != nil {
			return nil, fmt.Errorf("malformed chat logprobs: %v", err)
		}
		if v.Content == nil {
			return nil, nil
		}
		out := make([]TokenLogprob, len(*v.Content))
		for i, t := range *v.Content {
			lp, err := logprobValue(t.Logprob)
			if err != nil {
				return nil, fmt.Errorf("content[%d].logprob: %v", i, err)
			}
			out[i] = TokenLogprob{Token: t.Token, Logprob: lp}
			for j, a := range t.TopLogprobs {
				alp, err := logprobValue(a.Logprob)
				if err != nil {
					return nil, fmt.Errorf("content[%d].top_logprobs[%d].logprob: %v", i, j, err)
				}
				out[i].Top = append(out[i].Top, TokenChoice{Token: a.Token, Logprob: alp})
			}
		}
		return out, nil
	}
	var v struct {
		Tokens        []string                     `json:"tokens"`
		TokenLogprobs []json.RawMessage            `json:"token_logprobs"`
		TopLogprobs   []map[string]json.RawMessage `json:"top_logprobs"`
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, fmt.Errorf("malformed completion logprobs: %v", err)
	}
	if len(v.TokenLogprobs) != len(v.Tokens) {
		return nil, fmt.Errorf("%d tokens but %d token_logprobs", len(v.Tokens), len(v.TokenLogprobs))
	}
	if v.TopLogprobs != nil && len(v.TopLogprobs) != len(v.Tokens) {
		return nil, fmt.Errorf("%d tokens but %d top_logprobs", len(v.Tokens), len(v.TopLogprobs))
	}
	out := make([]TokenLogprob, len(v.Tokens))
	for i, tok := range v.Tokens {
		lp, err := logprobValue(v.TokenLogprobs[i])
		if err != nil {
			return nil, fmt.Errorf("token_logprobs[%d]: %v", i, err)
		}
		out[i] = TokenLogprob{Token: tok, Logprob: lp}
		if v.TopLogprobs == nil {
			continue
		}
		for a, r := range v.TopLogprobs[i] {
			alp, err := logprobValue(r)
			if err != nil {
				return nil, fmt.Errorf("top_logprobs[%d][%q]: %v", i, a, err)
			}
			out[i].Top = append(out[i].Top, TokenChoice{Token: a, Logprob: alp})
		}
		// A JSON object has no order: most likely first, ties by token, so
		// the row is the same whatever order the server wrote.
		sort.Slice(out[i].Top, func(x, y int) bool {
			tx, ty := out[i].Top[x], out[i].Top[y]
			if tx.Logprob != ty.Logprob {
				return tx.Logprob > ty.Logprob
			}
			return tx.Token < ty.Token
		})
	}
	return out, nil
}

// logprobValue reads one log-probability: a JSON number, finite, not
// above 0. Servers write -9999 or -inf-like large negatives for tokens
// they cut off; those are kept (they are finite).
func logprobValue(raw json.RawMessage) (float64, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return 0, fmt.Errorf("missing")
	}
	var x float64
	if err := json.Unmarshal(raw, &x); err != nil {
		return 0, fmt.Errorf("want a number, got %s", clip(string(raw), 20))
	}
	if math.IsNaN(x) || math.IsInf(x, 0) || x > 0 {
		return 0, fmt.Errorf("%v is not a log-probability (want a finite number <= 0)", x)
	}
	return x, nil
}

func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "..."
}
