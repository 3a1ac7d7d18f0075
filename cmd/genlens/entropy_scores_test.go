package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/genlens/genlens/internal/testkit/shareddata"
)

// entropyScoresInput: p1's samples agree, p2's differ; p3 has one sample.
const entropyScoresInput = `{"id":"p1","samples":["Paris","Paris","paris!"],"answer":"Paris","reference":"Paris"}
{"id":"p2","samples":["Lyon","Nice","Marseille"],"answer":"Lyon","reference":["Paris","City of Light"]}
{"id":"p3","samples":["only one"],"answer":"x","reference":"x"}
`

// TestEntropyDefaultTextUnchanged: the default table, as genlens printed
// it before --scores existed, character for character.
func TestEntropyDefaultTextUnchanged(t *testing.T) {
	in := writeFile(t, t.TempDir(), "a.jsonl", entropyScoresInput)
	want := `id  kernel_entropy  lexical_similarity  correct  
p1  -1              1                   true     
p2  0               0                   false    
p3  -               -                   true     1 usable sample(s); kernel entropy needs at least 2

prompts 3 (skipped 1, labelled 2), kernel cs(t=1..2)
accuracy of the answers under test: 0.5
AUROC for detecting incorrect answers:
  kernel entropy      1
  lexical similarity  1
`
	for _, args := range [][]string{{}, {"--scores", "kernel-entropy,lexsim"}} {
		code, stdout, stderr := cli(t, append([]string{"entropy", "--in", in}, args...)...)
		if code != 0 || stdout != want {
			t.Errorf("%v: exit %d (%s)\n%s\nwant\n%s", args, code, stderr, stdout, want)
		}
	}
}

func TestEntropyScoresAllCLI(t *testing.T) {
	dir := t.TempDir()
	in := writeFile(t, dir, "a.jsonl", entropyScoresInput)
	outDir := filepath.Join(dir, "out")
	code, stdout, stderr := cli(t, "entropy", "--in", in, "--scores", "all", "--kle-t", "1", "--auarc", "--json", "--out", outDir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var out struct {
		Items   []map[string]any `json:"items"`
		Summary map[string]any   `json:"summary"`
	}
	if err := json.Unmarshal([]byte(stdout), &out); err != nil {
		t.Fatal(err)
	}
	keys := []string{"kernel_entropy", "lexical_similarity", "kle", "eigv", "degree", "ecc"}
	for _, it := range out.Items {
		for _, k := range keys {
			if _, ok := it[k]; !ok {
				t.Errorf("item %v lacks %q", it["id"], k)
			}
		}
	}
	auroc := out.Summary["auroc"].(map[string]any)
	for _, k := range keys {
		// p1 (correct) agrees, p2 (incorrect) does not: every score
		// separates them.
		if auroc[k] != 1.0 {
			t.Errorf("auroc[%s] = %v, want 1", k, auroc[k])
		}
		// Kept: both at rejection 0 (accuracy 1/2), p1 at 1/2 (1).
		if a := out.Summary["auarc"].(map[string]any)[k]; a != 0.75 {
			t.Errorf("auarc[%s] = %v, want 0.75", k, a)
		}
	}
	if out.Summary["similarity"] != "rougel" || out.Summary["kle_t"] != 1.0 {
		t.Errorf("summary %v", out.Summary)
	}
	// p1: three identical answers, W = J: eigv 1, degree 0, kle at t = 1
	// the entropy of (1, e^{-3}, e^{-3})/(1 + 2e^{-3}).
	p1 := out.Items[0]
	z := 1 + 2*math.Exp(-3)
	kle := -(1/z)*math.Log(1/z) - 2*(math.Exp(-3)/z)*math.Log(math.Exp(-3)/z)
	if math.Abs(p1["eigv"].(float64)-1) > 1e-12 || p1["degree"].(float64) != 0 || math.Abs(p1["kle"].(float64)-kle) > 1e-12 {
		t.Errorf("p1 = %v, want eigv 1, degree 0, kle %v", p1, kle)
	}
	csvText, err := os.ReadFile(filepath.Join(outDir, "items.csv"))
	if err != nil || !strings.HasPrefix(string(csvText), "id,kernel_entropy,lexical_similarity,kle,eigv,degree,ecc,correct,reason\n") {
		t.Errorf("items.csv = %q (%v)", csvText, err)
	}
	checkOutputs(t, outDir, entropyOutputs)

	// The table: a column and an AUROC line per score.
	code, stdout, stderr = cli(t, "entropy", "--in", in, "--scores", "all")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{
		"id  kernel_entropy  lexical_similarity  kle       eigv  degree    ecc      correct",
		"prompts 3 (skipped 1, labelled 2), kernel cs(t=1..2), similarity rougel, kle t 0.3\n",
		"  kle                 1\n  eigv                1\n  degree              1\n  ecc                 1\n",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("table lacks %q:\n%s", want, stdout)
		}
	}
	if want := "; pe, ne, sentence-sar, sar: no token logprobs (sample with --logprobs;"; !strings.HasPrefix(stderr, "genlens: warning: left out: ") || !strings.Contains(stderr, want) {
		t.Errorf("stderr lacks %q:\n%s", want, stderr)
	}
	// Scores alone, without kernel entropy: no kernel column or line.
	code, stdout, stderr = cli(t, "entropy", "--in", in, "--scores", "degree,eigv")
	if code != 0 || strings.Contains(stdout, "kernel") || !strings.Contains(stdout, "id  eigv  degree    correct") ||
		!strings.Contains(stdout, "the scores need at least 2") || !strings.Contains(stdout, "prompts 3 (skipped 1, labelled 2), similarity rougel\n") {
		t.Errorf("--scores degree,eigv: exit %d (%s)\n%s", code, stderr, stdout)
	}
}

func TestEntropyScoresFlagErrors(t *testing.T) {
	in := writeFile(t, t.TempDir(), "a.jsonl", entropyScoresInput)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--scores", "kle,semantic-entropy"}, `--scores: unknown score "semantic-entropy"; did you mean se (LM-Polygraph's SemanticEntropy)? (want a comma-separated list of kernel-entropy, lexsim, kle, eigv, degree, ecc, pe,`},
		{[]string{"--scores", "semantic_entropy"}, `did you mean se (LM-Polygraph's SemanticEntropy)?`},
		{[]string{"--scores", "SemanticEntropy"}, `did you mean se (LM-Polygraph's SemanticEntropy)?`},
		{[]string{"--scores", "MaximumSequenceProbability"}, `did you mean msp (LM-Polygraph's MaximumSequenceProbability)?`},
		{[]string{"--scores", "kernel_entropy"}, `unknown score "kernel_entropy"; did you mean kernel-entropy?`},
		{[]string{"--scores", "lexsm"}, `unknown score "lexsm"; did you mean lexsim?`},
		{[]string{"--similarity", "embedding"}, "--similarity applies only to --scores kle, eigv, degree, ecc, cocoa-msp, cocoa-ppl, cocoa-mte, sentence-sar"},
		{[]string{"--scores", "eigv", "--similarity", "jaccard"}, `--similarity "jaccard": want rougel, embedding or nli`},
		{[]string{"--scores", "eigv", "--similarity", "nli"}, `--similarity nli needs an entailment judge (give --nli with --nli-weights, or --nli-base-url with --nli-model)`},
		{[]string{"--scores", "eigv", "--kle-t", "1"}, "--kle-t applies only to --scores kle"},
		{[]string{"--scores", "kle", "--kle-t", "0"}, "--kle-t 0: want a heat-kernel time in (0, 10000]"},
		{[]string{"--scores", "kle", "--kernel", "rbf"}, "--kernel applies only to --scores kernel-entropy"},
		{[]string{"--scores", "all", "--similarity", "embedding"}, "a.jsonl line 1: embeddings: missing; the embedding similarity needs one embedding per sample"},
	} {
		code, _, stderr := cli(t, append([]string{"entropy", "--in", in}, c.args...)...)
		if code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q, want 2 and %q", c.args, code, stderr, c.want)
		}
	}
}

// TestEntropyRealDataAllScores: every score on both TriviaQA files
// (answer under test samples[0], scores from samples[1:]). The AUROCs
// are logged for the README; each must beat 0.75, and kernel entropy and
// lexical similarity must equal the default run's exactly.
func TestEntropyRealDataAllScores(t *testing.T) {
	for _, f := range []string{"llm/triviaqa_llama13b_500x20.jsonl", "llm/triviaqa_qwen2.5-7b_1000x10.jsonl"} {
		path := shareddata.Path(t, f)
		auroc := func(args ...string) map[string]float64 {
			code, stdout, stderr := cli(t, append([]string{"entropy", "--in", path, "--holdout-first", "--json"}, args...)...)
			if code != 0 {
				t.Fatalf("%s: exit %d: %s", f, code, stderr)
			}
			var out struct {
				Summary struct {
					AUROC map[string]float64 `json:"auroc"`
				} `json:"summary"`
			}
			if err := json.Unmarshal([]byte(stdout), &out); err != nil {
				t.Fatal(err)
			}
			return out.Summary.AUROC
		}
		def, all := auroc(), auroc("--scores", "all")
		t.Logf("%s: AUROC %v", f, all)
		for _, k := range []string{"kernel_entropy", "lexical_similarity", "kle", "eigv", "degree"} {
			if !(all[k] > 0.75) {
				t.Errorf("%s: AUROC %s = %v, want > 0.75", f, k, all[k])
			}
		}
		if def["kernel_entropy"] != all["kernel_entropy"] || def["lexical_similarity"] != all["lexical_similarity"] {
			t.Errorf("%s: default %v, with all scores %v", f, def, all)
		}
	}
}

// Rows with references but no answer, scored without --holdout-first,
// are not labelled: the table and --json say why and name the flag that
// labels them; with it the AUROCs are there and the warning is gone.
func TestEntropyUnlabelledSaysWhy(t *testing.T) {
	in := writeFile(t, t.TempDir(), "a.jsonl", `{"id":"p1","samples":["Paris","Paris","Paris"],"reference":"Paris"}
{"id":"p2","samples":["Nice","Lyon","Marseille"],"reference":"Paris"}
{"id":"p3","samples":["Paris","Paris","Lyon"],"reference":"Paris"}
`)
	code, stdout, stderr := cli(t, "entropy", "--in", in)
	if code != 0 || !strings.Contains(stdout, "labelled 0") ||
		!strings.Contains(stderr, "genlens: warning: no prompt is labelled, so the AUROCs are empty: 3 of 3 rows have a reference but no answer") ||
		!strings.Contains(stderr, "set --holdout-first to judge") || strings.Contains(stdout, "warning") {
		t.Errorf("table: exit %d (%s)\n%s", code, stderr, stdout)
	}
	code, stdout, stderr = cli(t, "entropy", "--in", in, "--json")
	var res struct {
		Warnings []string `json:"warnings"`
	}
	if err := json.Unmarshal([]byte(stdout), &res); code != 0 || err != nil || len(res.Warnings) != 1 ||
		!strings.Contains(res.Warnings[0], "set --holdout-first") || strings.Contains(res.Warnings[0], "{") {
		t.Errorf("--json: exit %d (%s), %v\n%s", code, stderr, err, stdout)
	}
	code, stdout, stderr = cli(t, "entropy", "--in", in, "--holdout-first", "--json")
	var held struct {
		Warnings []string `json:"warnings"`
		Summary  struct {
			Labelled int `json:"labelled"`
			AUROC    map[string]*float64
		} `json:"summary"`
	}
	if err := json.Unmarshal([]byte(stdout), &held); code != 0 || err != nil || held.Warnings != nil ||
		held.Summary.Labelled != 3 || held.Summary.AUROC["kernel_entropy"] == nil {
		t.Errorf("--holdout-first: exit %d (%s), %v\n%s", code, stderr, err, stdout)
	}
}

// A long table sends the reader to the per-prompt scores: to --json or
// --out when neither is given, to the file --out wrote when it is.
func TestEntropyLongTablePointsAtOut(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	for i := range 45 {
		fmt.Fprintf(&b, `{"id":"p%d","samples":["a b","a c","b c"],"answer":"a","reference":"a"}`+"\n", i)
	}
	in := writeFile(t, dir, "a.jsonl", b.String())
	_, stdout, _ := cli(t, "entropy", "--in", in)
	if !strings.Contains(stdout, "(45 per-prompt scores: in the JSON output, or in items.csv of an output directory)") {
		t.Errorf("without --out:\n%s", stdout)
	}
	out := filepath.Join(dir, "out")
	code, stdout, stderr := cli(t, "entropy", "--in", in, "--out", out)
	if want := "(45 per-prompt scores in " + filepath.Join(out, "items.csv") + ")"; code != 0 || !strings.Contains(stdout, want) || strings.Contains(stdout, "in the JSON output") {
		t.Errorf("with --out: exit %d (%s)\n%s\nwant %s", code, stderr, stdout, want)
	}
}
