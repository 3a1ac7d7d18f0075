package llmjob

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/fstest"

	"github.com/genlens/genlens/internal/testkit/llmtest"
	"github.com/genlens/genlens/internal/text/tokenize"
	"github.com/genlens/genlens/job"
	"github.com/genlens/genlens/metric/evalstat"
)

// TestEntropyAllScoresEndToEnd: the fake server samples answers with
// logprobs (and a greedy answer), then entropy --scores all, with the
// same server as entailment judge and as the model p(True) asks, gives
// every score, each equal to its value computed here by hand from the
// stored rows.
func TestEntropyAllScoresEndToEnd(t *testing.T) {
	var judged atomic.Int64
	var mu sync.Mutex
	var asked []string
	judge, ptrue, questions := judgeReply(&judged), ptrueReply(&mu, &asked), questionReply(&mu, &asked)
	srv, _ := sampleServer(t, func(c *llmtest.Config) {
		c.Reply = func(p string) (llmtest.Reply, bool) {
			if r, ok := judge(p); ok {
				return r, true
			}
			if r, ok := questions(p); ok {
				return r, true
			}
			return ptrue(p)
		}
	})
	sreq := sampleReq(srv.URL)
	sreq.N, sreq.Greedy, sreq.Logprobs, sreq.TopLogprobs = 6, true, true, 3
	sres, err := Sample(context.Background(), job.Env{FS: fstest.MapFS{"p.jsonl": {Data: promptsFile(6)}}, Secret: sampleSecrets}, sreq)
	if err != nil {
		t.Fatal(err)
	}
	var rows bytes.Buffer
	for _, r := range sres.Rows() {
		rows.Write(r)
	}
	req := NewEntropyRequest()
	req.In, req.Scores, req.AUARC = "answers.jsonl", "all", true
	req.NLIBaseURL, req.NLIModel, req.NLIAPIKeyEnv = srv.URL+"/v1", "genlens-categorical", "SAMPLE_KEY"
	req.BaseURL, req.Model, req.APIKeyEnv = srv.URL+"/v1", "genlens-categorical", "SAMPLE_KEY"
	res, err := Entropy(context.Background(), job.Env{FS: fstest.MapFS{"answers.jsonl": {Data: rows.Bytes()}}, Secret: sampleSecrets}, req)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, d := range entropyScores {
		keys = append(keys, d.key)
	}
	if got := res.Scores(); strings.Join(got, ",") != strings.Join(keys, ",") {
		t.Fatalf("scores %v, want every one: %v (warnings %q)", got, keys, res.Warnings)
	}
	for _, k := range keys {
		if res.Summary.AUROC[k] == nil || res.Summary.AUARC[k] == nil {
			t.Errorf("summary lacks %s", k)
		}
	}

	// By hand, from the rows as a reader of the file sees them.
	type tok struct {
		Token   string  `json:"token"`
		Logprob float64 `json:"logprob"`
		Top     []struct {
			Logprob float64 `json:"logprob"`
		} `json:"top"`
	}
	type row struct {
		Prompt         string   `json:"prompt"`
		Samples        []string `json:"samples"`
		Answer         string   `json:"answer"`
		Logprobs       [][]tok  `json:"logprobs"`
		AnswerLogprobs []tok    `json:"answer_logprobs"`
	}
	for i, line := range strings.Split(strings.TrimSpace(rows.String()), "\n") {
		var r row
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatal(err)
		}
		m := float64(len(r.Samples))
		var pe, ne float64
		seq := make([]float64, len(r.Samples))
		for j, toks := range r.Logprobs {
			for _, x := range toks {
				seq[j] += x.Logprob
			}
			pe -= seq[j] / m
			ne -= seq[j] / float64(len(toks)) / m
		}
		var ans, mte float64
		for _, x := range r.AnswerLogprobs {
			ans += x.Logprob
			var z float64
			for _, a := range x.Top {
				z += math.Exp(a.Logprob)
			}
			for _, a := range x.Top {
				q := math.Exp(a.Logprob) / z
				mte -= q * math.Log(q) / float64(len(r.AnswerLogprobs))
			}
		}
		// The judge's relation is an equivalence (same word but for
		// case): the clusters are its classes.
		mass, count := map[string]float64{}, map[string]float64{}
		var total float64
		for j, s := range r.Samples {
			c := strings.ToLower(strings.TrimSpace(s))
			mass[c] += math.Exp(seq[j])
			count[c]++
			total += math.Exp(seq[j])
		}
		var se, sed float64
		for c := range mass {
			p, q := mass[c]/total, count[c]/m
			se -= p * math.Log(p)
			sed -= q * math.Log(q)
		}
		// LM-Polygraph's estimators. The judge gives one label: entailment
		// for the same word, neutral otherwise; the similarity is
		// RougeL-F of the words.
		answer := tokenize.Words(r.Answer)
		largest, luq, dissim := 0.0, 0.0, 0.0
		for _, n := range count {
			largest = max(largest, n)
		}
		same := func(a, b string) bool {
			return strings.EqualFold(strings.TrimSpace(a), strings.TrimSpace(b))
		}
		sim := func(j, k int) float64 {
			return evalstat.RougeLF(tokenize.Words(r.Samples[j]), tokenize.Words(r.Samples[k]))
		}
		normed := func(lp float64, n int) float64 { return math.Pow(math.Exp(lp), 1/float64(n)) }
		g := normed(ans, len(r.AnswerLogprobs))
		num, den, ssar := g, g, 0.0
		seen := map[string]bool{}
		for j, s := range r.Samples {
			dissim += (1 - evalstat.RougeLF(answer, tokenize.Words(s))) / m
			for k := range r.Samples {
				if k != j {
					luq += map[bool]float64{true: 1, false: 0.5}[same(s, r.Samples[k])] / (m * (m - 1))
				}
			}
			if !seen[s] {
				seen[s] = true
				p := normed(seq[j], len(r.Logprobs[j]))
				num += p * map[bool]float64{true: 1, false: 0.5}[same(r.Answer, s)]
				den += p
			}
			rel := 0.0
			for k := range r.Samples {
				if k != j {
					rel += math.Exp(seq[k]) * sim(j, k) / 0.001
				}
			}
			ssar -= math.Log(rel+math.Exp(seq[j])) / m
		}
		// TokenSAR and SAR: each token weighs 1 − RougeL-F of the answer
		// with and without it (½ each for an answer of one token).
		tokenSAR := func(toks []tok) float64 {
			rel := make([]float64, len(toks))
			var full strings.Builder
			for _, x := range toks {
				full.WriteString(x.Token)
			}
			for k := range toks {
				rel[k] = 0.5
				if len(toks) > 1 {
					var w strings.Builder
					for l, x := range toks {
						if l != k {
							w.WriteString(x.Token)
						}
					}
					rel[k] = 1 - evalstat.RougeLF(tokenize.Words(full.String()), tokenize.Words(w.String()))
				}
			}
			var z, e float64
			for k := range toks {
				z += rel[k]
			}
			for k, x := range toks {
				e -= x.Logprob * rel[k] / z
			}
			return e
		}
		var sar float64
		for j := range r.Samples {
			rel := 0.0
			for k := range r.Samples {
				if k != j {
					rel += math.Exp(-tokenSAR(r.Logprobs[k])) * sim(j, k) / 0.001
				}
			}
			sar -= math.Log(rel+math.Exp(-tokenSAR(r.Logprobs[j]))) / m
		}
		nTok := float64(len(r.AnswerLogprobs))
		pTrue := 0.2
		if strings.TrimSpace(r.Answer) == "paris" {
			pTrue = 0.85
		}
		it := res.Items[i]
		for _, c := range []struct {
			key  string
			want float64
		}{
			{"pe", pe}, {"ne", ne}, {"msp", 1 - math.Exp(ans)}, {"perplexity", math.Exp(-ans / float64(len(r.AnswerLogprobs)))},
			{"mte", mte}, {"se", se}, {"se_discrete", sed}, {"numsets", float64(len(mass))}, {"ptrue", 1 - pTrue},
			{"label_prob", 1 - largest/m}, {"luq", 1 - luq}, {"cocoa_msp", -ans * dissim}, {"cocoa_ppl", -ans / nTok * dissim},
			{"cocoa_mte", mte * dissim}, {"sentence_sar", ssar}, {"semantic_density", -num / den},
			// The judge entails a word by itself but for case, and is
			// neutral otherwise: every alternative of another word is left
			// out of CCP, and every token's factor is 1.
			{"token_sar", tokenSAR(r.AnswerLogprobs)}, {"sar", sar}, {"ccp", -1},
			// The scripted replies of questionReply.
			{"ptrue_empirical", map[bool]float64{true: 0, false: 1}[strings.TrimSpace(r.Answer) == "paris"]},
			{"verbalized_1s", 1 - 0.8}, {"verbalized_2s", 1 - 0.6}, {"linguistic_1s", 1 - 0.9},
		} {
			if v := it.Score(c.key); v == nil || math.Abs(float64(*v)-c.want) > 1e-9 {
				t.Errorf("%s %s = %v, want %v", it.ID, c.key, v, c.want)
			}
		}
		for _, k := range keys {
			if v := it.Score(k); v == nil || math.IsNaN(float64(*v)) {
				t.Errorf("%s %s = %v, want a value", it.ID, k, v)
			}
		}
	}
	if len(asked) != 5*len(res.Items) || judged.Load() == 0 {
		t.Errorf("the model asked %d questions for %d prompts, want 5 each; judge asked %d times", len(asked), len(res.Items), judged.Load())
	}
	var table bytes.Buffer
	entropyText(&table, &req, res)
	if !strings.Contains(table.String(), "  score               AUROC     AUARC\n") || !strings.Contains(table.String(), "  p(True)  ") {
		t.Errorf("table:\n%s", table.String())
	}
	var csv bytes.Buffer
	if err := res.Artifacts()[0].Write(&csv); err != nil {
		t.Fatal(err)
	}
	if want := "id," + strings.Join(keys, ",") + ",correct,reason\n"; !strings.HasPrefix(csv.String(), want) {
		t.Errorf("items.csv header %q, want %q", strings.SplitN(csv.String(), "\n", 2)[0], want)
	}
}

// questionReply scripts the model's replies to the questions of
// ptrue-empirical (" True" for a proposed answer paris, " False"
// otherwise), verbalized-1s (0.8), verbalized-2s (0.6, after the answer)
// and linguistic-1s (Highly Likely); the prompts it saw are kept.
func questionReply(mu *sync.Mutex, seen *[]string) func(string) (llmtest.Reply, bool) {
	return func(prompt string) (llmtest.Reply, bool) {
		var text string
		switch {
		case strings.Contains(prompt, "Reply with one word, True or False."):
			text = " False"
			if strings.Contains(prompt, "Proposed answer: paris\n") {
				text = " True"
			}
		case strings.Contains(prompt, "Probability: <a number") && strings.Contains(prompt, "Guess:"):
			text = "Guess: paris\nProbability: 0.8"
		case strings.Contains(prompt, "Probability: <a number"):
			text = "Probability: 0.6"
		case strings.Contains(prompt, "Confidence: <one of the expressions>"):
			text = "Guess: paris\nConfidence: Highly Likely"
		default:
			return nil, false
		}
		mu.Lock()
		*seen = append(*seen, prompt)
		mu.Unlock()
		return llmtest.Reply{{Text: text, Logprob: -0.1}}, true
	}
}
