package main

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOutNeverOverwritesInputs runs every command that writes into --out
// with an input sitting where one of its artifacts would go: each must
// refuse with exit code 2 before doing any work, and leave the input as it
// was.
func TestOutNeverOverwritesInputs(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	if err := os.Mkdir(out, 0o755); err != nil {
		t.Fatal(err)
	}
	imgs := filepath.Join(dir, "imgs")
	if err := os.Mkdir(imgs, 0o755); err != nil {
		t.Fatal(err)
	}
	const content = "precious user data\n"
	in := func(name string) string { return writeFile(t, out, name, content) }
	other := writeFile(t, dir, "other.npy", content)
	tests := []struct {
		name  string
		args  []string
		input string // the file that must survive
		want  string
	}{
		{"entropy", []string{"entropy", "--in", in("entropy.json"), "--out", out}, "entropy.json", "would overwrite the input"},
		{"correlate", []string{"correlate", "--out", out, other, in("correlation.csv")}, "correlation.csv", "would overwrite the input"},
		{"select", []string{"select", "--score", "is", "--out", out, "--pools", other, in("steps.csv")}, "steps.csv", "would overwrite the input"},
		{"disentangle file", []string{"disentangle", "--train", in("labels.npy"), "--test", other, "--generated", other, "--out", out}, "labels.npy", "would overwrite the input"},
		{"disentangle folder", []string{"disentangle", "--train", imgs, "--test", other, "--generated", other, "--out", imgs}, "", "is the input"},
		{"hallucination run", []string{"hallucination", "run", "--backend", "linear", "--context", other, "--queries", in("run.json"), "--out", out}, "run.json", "would overwrite the input"},
		{"mse estimate", []string{"mse", "estimate", "--model", other, "--data", in("chunks.csv"), "--out", out}, "chunks.csv", "would overwrite the input"},
		{"mse bench", []string{"mse", "bench", "--dataset", in("trials.csv"), "--out", out}, "trials.csv", "would overwrite the input"},
		{"stats", []string{"stats", "--in", in("s.npz"), "--out", filepath.Join(out, "s.npz")}, "s.npz", "refusing to overwrite"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := cli(t, tt.args...)
			if code != 2 || !strings.Contains(stderr, tt.want) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
				t.Errorf("exit %d, stderr %q; want 2 and one line with %q", code, stderr, tt.want)
			}
			if tt.input != "" {
				if b, err := os.ReadFile(filepath.Join(out, tt.input)); err != nil || string(b) != content {
					t.Errorf("input %s changed: %q, %v", tt.input, b, err)
				}
			}
		})
	}
	if entries, _ := os.ReadDir(imgs); len(entries) != 0 {
		t.Errorf("the input folder gained files: %v", entries)
	}
}

func TestOutIsAFile(t *testing.T) {
	dir := t.TempDir()
	file := writeFile(t, dir, "notadir", "x\n")
	code, _, stderr := cli(t, "select", "--score", "is", "--out", file, "--pools", file, file)
	if code != 2 || !strings.Contains(stderr, "is a file") {
		t.Errorf("exit %d, %q", code, stderr)
	}
}

func TestNegativeZeroPrintsAsZero(t *testing.T) {
	negZero := math.Copysign(0, -1)
	if b, _ := num(negZero).MarshalJSON(); string(b) != "0" {
		t.Errorf("JSON of -0: %s", b)
	}
	if s := fmtNum(negZero); s != "0" {
		t.Errorf("table text of -0: %s", s)
	}
}

// requireUsageError fails unless a command exited 2 with a one-line
// message that contains every string in want.
func requireUsageError(t *testing.T, code int, stderr string, want ...string) {
	t.Helper()
	if code != 2 || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
		t.Fatalf("exit %d, stderr %q; want 2 and one line", code, stderr)
	}
	for _, w := range want {
		if !strings.Contains(stderr, w) {
			t.Errorf("stderr %q lacks %q", stderr, w)
		}
	}
}

// A file name holding terminal escape sequences prints as its name, its
// control characters escaped, in messages as in tables: it never drives
// the terminal.
func TestControlCharactersInNamesAreEscaped(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "e\x1b[31mvil\r\u009b.csv")
	if err := os.WriteFile(name, []byte("a,b\n1,2\n3,x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr strings.Builder
	if code := run([]string{"stats", "--in", name, "--out", filepath.Join(dir, "o.npz")}, &stdout, &stderr); code != 2 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	got := stderr.String()
	if strings.ContainsAny(got, "\x1b\r\u009b") || !strings.Contains(got, `e\x1b[31mvil\r\u009b.csv`) {
		t.Errorf("stderr %q: want the name with its control characters escaped", got)
	}
	if !strings.HasSuffix(got, "\n") {
		t.Errorf("stderr %q: the newline was escaped too", got)
	}
}
