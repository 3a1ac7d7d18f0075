package main

import (
	"encoding/json"
	"math"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/genlens/genlens/internal/testkit/llmtest"
	"github.com/genlens/genlens/metric/hallucination/categorical"
)

// baselineServer is the categorical test model, whose replies to an
// entailment judge's prompt (the answers' last words agree but for case)
// and to p(True)'s (" True" at 0.7) are scripted.
func baselineServer(t *testing.T) string {
	t.Helper()
	reply := func(prompt string) (llmtest.Reply, bool) {
		switch {
		case strings.HasPrefix(prompt, "We are evaluating answers"):
			last := func(from, to string) string {
				f := strings.Fields(prompt[strings.Index(prompt, from)+len(from) : strings.Index(prompt, to)])
				return f[len(f)-1]
			}
			ans := "neutral"
			if strings.EqualFold(last("Answer 1: ", "\nPossible Answer 2"), last("Answer 2: ", "\nDoes")) {
				ans = "entailment"
			}
			return llmtest.Reply{{Text: ans}}, true
		case strings.Contains(prompt, "Proposed Answer:"):
			top := map[string]float64{" True": math.Log(0.7), " False": math.Log(0.3)}
			return llmtest.Reply{{Text: " True", Logprob: top[" True"], Top: top}}, true
		}
		return nil, false
	}
	h, err := llmtest.NewHandler(llmtest.Config{Model: categorical.Symmetric(3, 2, 0.5), Inputs: []string{"cat", "dog", "bird"},
		Labels: []string{"yes", "no"}, APIKey: "sk-secret-4711", Reply: reply})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL + "/v1"
}

// sample --logprobs, then entropy --scores all with the judge and p(True):
// every score in the JSON, the summary and items.csv, each as computed
// by hand from the rows; the one-step form gives the same document.
func TestEntropyBaselinesCLI(t *testing.T) {
	url := baselineServer(t)
	dir := t.TempDir()
	prompts := writePrompts(t, dir, 6)
	t.Setenv("SAMPLE_TEST_KEY", "sk-secret-4711")
	common := []string{"--base-url", url, "--model", "genlens-categorical", "--api-key-env", "SAMPLE_TEST_KEY"}
	sampling := append([]string{"--n", "5", "--max-tokens", "2", "--seed", "1", "--greedy", "--logprobs", "--top-logprobs", "2", "--concurrency", "1"}, common...)
	answers := filepath.Join(dir, "answers.jsonl")
	if code, _, stderr := cli(t, append([]string{"sample", "--prompts", prompts, "--out", answers}, sampling...)...); code != 0 {
		t.Fatalf("sample: %s", stderr)
	}
	scoring := []string{"--scores", "all", "--nli-base-url", url, "--nli-model", "genlens-categorical", "--nli-api-key-env", "SAMPLE_TEST_KEY", "--auarc", "--json"}
	outDir := filepath.Join(dir, "out")
	code, stdout, stderr := cli(t, append(append([]string{"entropy", "--in", answers, "--out", outDir}, scoring...), common...)...)
	if code != 0 {
		t.Fatalf("entropy: %s", stderr)
	}
	keys := []string{"kernel_entropy", "lexical_similarity", "kle", "eigv", "degree", "ecc", "pe", "ne", "msp", "perplexity", "mte", "se", "se_discrete", "numsets", "ptrue", "label_prob", "cocoa_msp", "cocoa_ppl", "cocoa_mte", "sentence_sar", "semantic_density", "luq", "token_sar", "sar", "ccp"}
	var out struct {
		Items   []map[string]any
		Summary struct {
			AUROC, AUARC map[string]any
		}
		Warnings []string
	}
	if err := json.Unmarshal([]byte(stdout), &out); err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		if _, ok := out.Summary.AUROC[k]; !ok {
			t.Errorf("summary.auroc lacks %s", k)
		}
		if _, ok := out.Summary.AUARC[k]; !ok {
			t.Errorf("summary.auarc lacks %s", k)
		}
	}
	data, _ := os.ReadFile(answers)
	for i, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var r struct {
			Samples  []string
			Logprobs [][]struct{ Logprob float64 }
			Answer   []struct{ Logprob float64 } `json:"answer_logprobs"`
		}
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatal(err)
		}
		var pe, ans float64
		sets := map[string]bool{}
		for j, toks := range r.Logprobs {
			for _, x := range toks {
				pe -= x.Logprob / float64(len(r.Samples))
			}
			sets[strings.ToLower(strings.TrimSpace(r.Samples[j]))] = true
		}
		for _, x := range r.Answer {
			ans += x.Logprob
		}
		it := out.Items[i]
		for _, c := range []struct {
			key  string
			want float64
		}{{"pe", pe}, {"msp", -math.Expm1(ans)}, {"numsets", float64(len(sets))}, {"ptrue", 0.3}} {
			if v, ok := it[c.key].(float64); !ok || math.Abs(v-c.want) > 1e-9 {
				t.Errorf("%v %s = %v, want %v", it["id"], c.key, it[c.key], c.want)
			}
		}
		for _, k := range keys {
			if _, ok := it[k].(float64); !ok {
				t.Errorf("%v %s = %v, want a number", it["id"], k, it[k])
			}
		}
	}
	csvText, _ := os.ReadFile(filepath.Join(outDir, "items.csv"))
	if want := "id," + strings.Join(keys, ",") + ",correct,reason\n"; !strings.HasPrefix(string(csvText), want) {
		t.Errorf("items.csv header %q", strings.SplitN(string(csvText), "\n", 2)[0])
	}
	checkOutputs(t, outDir, entropyOutputs)

	// One step: the same answers (same seeds), the same scores.
	code, oneStep, stderr := cli(t, append(append([]string{"entropy", "--prompts", prompts}, scoring...), sampling...)...)
	if code != 0 {
		t.Fatalf("one step: %s", stderr)
	}
	if oneStep != stdout {
		t.Errorf("one step:\n%s\ntwo steps:\n%s", oneStep, stdout)
	}
	// The table prints every score's AUROC and AUARC.
	code, table, _ := cli(t, append(append([]string{"entropy", "--in", answers}, scoring[:len(scoring)-1]...), common...)...)
	if code != 0 || !strings.Contains(table, "  score               AUROC     AUARC\n") || !strings.Contains(table, "\n  p(True)   ") || !strings.Contains(table, "\n  se-discrete   ") {
		t.Errorf("table (exit %d):\n%s", code, table)
	}
}
