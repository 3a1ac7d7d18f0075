package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Output problems are reported before any computation: an output file in
// a missing directory, an output file that is a directory, an --out
// directory that cannot be created. --model /dev/zero (or a FIFO) is bad
// input, not an endless read.
func TestOutputProblemsBeforeWork(t *testing.T) {
	dir := t.TempDir()
	train := mseCSV(t, dir, "ref.csv", 50, 0, 1, nil)
	blocker := writeFile(t, dir, "plain.txt", "x")
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"model in a missing directory", []string{"mse", "fit", "--train", train, "--target", "y", "--prediction", "pred", "--epochs", "1000000", "--model", filepath.Join(dir, "missing", "m.json")}, "does not exist"},
		{"model is a directory", []string{"mse", "fit", "--train", train, "--target", "y", "--prediction", "pred", "--epochs", "1000000", "--model", dir}, "is a directory"},
		{"out under a file", []string{"mse", "bench", "--dataset", "synthetic-a", "--trials", "100000", "--out", filepath.Join(blocker, "sub")}, "--out"},
	} {
		code, _, stderr := cli(t, tc.args...)
		if code == 0 || !contains(stderr, tc.want) {
			t.Errorf("%s: exit %d, stderr %q, want %q", tc.name, code, stderr, tc.want)
		}
	}
	if _, err := os.Stat("/dev/zero"); err == nil {
		data := mseCSV(t, dir, "op.csv", 20, 0, 2, nil)
		code, _, stderr := cli(t, "mse", "estimate", "--model", "/dev/zero", "--data", data)
		requireUsageError(t, code, stderr, "/dev/zero", "not a regular file")
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }
