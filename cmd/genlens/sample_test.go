package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/genlens/genlens/internal/console/ptytest"
	"github.com/genlens/genlens/internal/testkit/llmtest"
	"github.com/genlens/genlens/metric/hallucination/categorical"
)

// sampleModelServer serves the categorical test model with an API key.
func sampleModelServer(t *testing.T, latency time.Duration, maxN int) string {
	t.Helper()
	h, err := llmtest.NewHandler(llmtest.Config{Model: categorical.Symmetric(3, 2, 0.5), Inputs: []string{"cat", "dog", "bird"},
		Labels: []string{"yes", "no"}, APIKey: "sk-secret-4711", Latency: latency, MaxN: maxN})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL + "/v1"
}

func writePrompts(t *testing.T, dir string, k int) string {
	t.Helper()
	var b bytes.Buffer
	for i := range k {
		fmt.Fprintf(&b, `{"id": "p%02d", "prompt": "Input: %s\nLabel:", "reference": "yes", "i": %d}`+"\n", i, []string{"cat", "dog", "bird"}[i%3], i)
	}
	path := filepath.Join(dir, "prompts.jsonl")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// countRows checks that every line of the answers file is a complete row
// with n samples and returns the ids and how often each appears.
func countRows(t *testing.T, path string, n int) map[string]int {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]int{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var row struct {
			ID      string   `json:"id"`
			Samples []string `json:"samples"`
		}
		if err := json.Unmarshal(sc.Bytes(), &row); err != nil || len(row.Samples) != n {
			t.Fatalf("row %q: %v, %d samples", sc.Text(), err, len(row.Samples))
		}
		ids[row.ID]++
	}
	return ids
}

// The real binary, interrupted with SIGINT mid-run, keeps the prompts it
// finished (complete lines, synced), exits 130, and a rerun of the same
// command samples only the rest: every id once, each with n samples. A
// truncated last line (a crash mid-write) is repaired. The API key is in
// no output.
func TestSampleBinaryInterruptAndResume(t *testing.T) {
	bin := serveBinary(t)
	url := sampleModelServer(t, 40*time.Millisecond, 1) // one choice a request: 4 requests a prompt
	dir := t.TempDir()
	prompts := writePrompts(t, dir, 30)
	out := filepath.Join(dir, "answers.jsonl")
	args := []string{"sample", "--prompts", prompts, "--base-url", url, "--model", "genlens-categorical", "--n", "4",
		"--max-tokens", "2", "--seed", "5", "--concurrency", "2", "--api-key-env", "SAMPLE_TEST_KEY", "--out", out}
	start := func() (*exec.Cmd, *bytes.Buffer, *bytes.Buffer) {
		cmd := exec.Command(bin, args...)
		cmd.Env = append(os.Environ(), "SAMPLE_TEST_KEY=sk-secret-4711")
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		return cmd, &stdout, &stderr
	}
	cmd, stdout, stderr := start()
	deadline := time.Now().Add(30 * time.Second)
	for {
		data, _ := os.ReadFile(out)
		if bytes.Count(data, []byte("\n")) >= 5 {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("no 5 rows after 30 s: %s", stderr)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Fatalf("interrupted run: %v\n%s", err, stderr)
	}
	first := countRows(t, out, 4)
	if len(first) >= 30 || len(first) < 5 {
		t.Fatalf("%d prompts before the interrupt, want some but not all", len(first))
	}
	for id, c := range first {
		if c != 1 {
			t.Errorf("%s written %d times", id, c)
		}
	}
	if !strings.Contains(stderr.String(), "interrupted") || !strings.Contains(stderr.String(), "run the same command again") {
		t.Errorf("stderr %q", stderr)
	}
	logs := stdout.String() + stderr.String()
	// A crash mid-write leaves a truncated line.
	f, _ := os.OpenFile(out, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"id":"p29","samples":[" yes`)
	f.Close()
	cmd, stdout, stderr = start()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("rerun: %v\n%s", err, stderr)
	}
	logs += stdout.String() + stderr.String()
	all := countRows(t, out, 4)
	if len(all) != 30 {
		t.Errorf("%d ids after the rerun, want 30", len(all))
	}
	for id, c := range all {
		if c != 1 {
			t.Errorf("%s written %d times", id, c)
		}
	}
	if !strings.Contains(stdout.String(), fmt.Sprintf("sampled %d, skipped %d", 30-len(first), len(first))) || !strings.Contains(stderr.String(), "truncated last line") {
		t.Errorf("rerun: stdout %q stderr %q", stdout, stderr)
	}
	data, _ := os.ReadFile(out)
	if strings.Contains(logs+string(data), "sk-secret-4711") {
		t.Error("the API key was printed or written")
	}
}

// Command-line errors: bad rows and flags exit 2 naming the line or flag;
// the one-step entropy gives the same scores as sample then entropy.
func TestSampleCLI(t *testing.T) {
	url := sampleModelServer(t, 0, 0)
	dir := t.TempDir()
	prompts := writePrompts(t, dir, 9)
	t.Setenv("SAMPLE_TEST_KEY", "sk-secret-4711")
	common := []string{"--base-url", url, "--model", "genlens-categorical", "--n", "5", "--max-tokens", "2", "--seed", "1", "--api-key-env", "SAMPLE_TEST_KEY", "--greedy", "--concurrency", "1"}
	dup := filepath.Join(dir, "dup.jsonl")
	os.WriteFile(dup, []byte("{\"id\": 1, \"prompt\": \"x\"}\n{\"id\": 1, \"prompt\": \"y\"}\n"), 0o644)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{append([]string{"sample", "--prompts", dup, "--out", filepath.Join(dir, "x.jsonl")}, common...), "dup.jsonl line 2: id: duplicate id \"1\" (first on line 1)"},
		{append([]string{"sample", "--prompts", prompts}, common...), "--out ANSWERS.jsonl is required"},
		{append(append([]string{"sample", "--prompts", prompts, "--out", filepath.Join(dir, "x.jsonl")}, common...), "--n", "0"), "--n 0: want 1..1024"},
		{[]string{"sample", "--prompts", prompts, "--base-url", url, "--model", "m", "--out", filepath.Join(dir, "x.jsonl"), "--top-p", "2"}, "--top-p 2: want a value in (0, 1]"},
		{[]string{"sample", "--prompts", prompts, "--base-url", url, "--model", "m", "--out", prompts}, "is the prompts file"},
		{[]string{"entropy", "--in", "a.jsonl", "--base-url", url}, "--base-url samples answers and needs --prompts"},
		{[]string{"entropy", "--in", "a.jsonl", "--prompts", prompts, "--base-url", url, "--model", "m"}, "not both"},
	} {
		var stdout, stderr bytes.Buffer
		code := run(tc.args, &stdout, &stderr)
		if code != 2 || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("%v: exit %d, stderr %q, want 2 and %q", tc.args, code, stderr.String(), tc.want)
		}
	}
	// Two steps, then one.
	answers := filepath.Join(dir, "answers.jsonl")
	var stdout, stderr bytes.Buffer
	if code := run(append([]string{"sample", "--prompts", prompts, "--out", answers}, common...), &stdout, &stderr); code != 0 {
		t.Fatalf("sample: %d %s", code, stderr.String())
	}
	if !strings.Contains(stdout.String(), "prompts 9: sampled 9, skipped 0") || !strings.Contains(stdout.String(), "from 18 requests (0 retries)") {
		t.Errorf("summary %q", stdout.String())
	}
	stdout.Reset()
	if code := run([]string{"entropy", "--in", answers, "--json"}, &stdout, &stderr); code != 0 {
		t.Fatalf("entropy: %s", stderr.String())
	}
	twoSteps := stdout.String()
	stdout.Reset()
	stderr.Reset()
	oneStep := filepath.Join(dir, "one.jsonl")
	if code := run(append([]string{"entropy", "--prompts", prompts, "--out-answers", oneStep, "--json"}, common...), &stdout, &stderr); code != 0 {
		t.Fatalf("one step: %s", stderr.String())
	}
	if stdout.String() != twoSteps {
		t.Errorf("one step:\n%s\ntwo steps:\n%s", stdout.String(), twoSteps)
	}
	if !strings.Contains(stderr.String(), "sampled 9") {
		t.Errorf("one step: the sample summary is not on stderr: %q", stderr.String())
	}
	a, _ := os.ReadFile(answers)
	b, _ := os.ReadFile(oneStep)
	if countRows(t, oneStep, 5)["p03"] != 1 || len(a) != len(b) {
		t.Errorf("one-step answers differ from sample's (%d and %d bytes)", len(b), len(a))
	}
}

// On a terminal, sample draws a bar with prompts/s, tokens/s and the time
// left; the summary follows on lines of its own.
func TestSampleProgressUnderPTY(t *testing.T) {
	url := sampleModelServer(t, 30*time.Millisecond, 0)
	dir := t.TempDir()
	prompts := writePrompts(t, dir, 12)
	t.Setenv("SAMPLE_TEST_KEY", "sk-secret-4711")
	var code int
	got := ptytest.Run(t, func(tty *os.File) {
		code = run([]string{"sample", "--prompts", prompts, "--base-url", url, "--model", "genlens-categorical", "--n", "3",
			"--max-tokens", "2", "--concurrency", "1", "--api-key-env", "SAMPLE_TEST_KEY", "--out", filepath.Join(dir, "a.jsonl")}, tty, tty)
	})
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, got)
	}
	for _, want := range []string{"tokens/s", "prompts/s", "/12, ", "prompts 12: sampled 12"} {
		if !strings.Contains(got, want) {
			t.Errorf("terminal output lacks %q:\n%q", want, got)
		}
	}
	for _, l := range ptytest.Screen(got) {
		if strings.Contains(l, "prompts 12:") && !strings.HasPrefix(l, "prompts 12:") {
			t.Errorf("the summary shares a line with the bar: %q", l)
		}
	}
}
