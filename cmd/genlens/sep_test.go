package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeSep writes rows as a CSV file with sep between the fields.
func writeSep(t *testing.T, dir, name string, sep string, header []string, rows [][]float64) string {
	t.Helper()
	var b strings.Builder
	if header != nil {
		b.WriteString(strings.Join(header, sep) + "\n")
	}
	for _, r := range rows {
		f := make([]string, len(r))
		for j, v := range r {
			f[j] = fmt.Sprint(v)
		}
		b.WriteString(strings.Join(f, sep) + "\n")
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// A semicolon-separated CSV says its separator looks like ';' and how to
// read it; --sep ';' (or --delimiter ';') reads it as the comma file is
// read, for feature rows and for the tables of mse.
func TestSemicolonCSV(t *testing.T) {
	dir := t.TempDir()
	r := rand.New(rand.NewPCG(7, 8))
	rows := func(n, d int, shift float64) [][]float64 {
		out := make([][]float64, n)
		for i := range out {
			out[i] = make([]float64, d)
			for j := range out[i] {
				out[i][j] = r.NormFloat64() + shift
			}
		}
		return out
	}
	rd, fd := rows(30, 3, 0), rows(25, 3, 0.5)
	h := []string{"a", "b", "c"}
	realC, fakeC := writeSep(t, dir, "real.csv", ",", h, rd), writeSep(t, dir, "fake.csv", ",", h, fd)
	realS, fakeS := writeSep(t, dir, "real_s.csv", ";", h, rd), writeSep(t, dir, "fake_s.csv", ";", h, fd)

	code, _, stderr := cli(t, "compare", realS, fakeS)
	requireUsageError(t, code, stderr, "_s.csv line 1", "the separator looks like ';', not ',': set --sep ';'")
	_, want, _ := cli(t, "compare", realC, fakeC, "--metrics", "fid,mmd", "--json")
	for _, flag := range []string{"--sep", "--delimiter"} {
		code, got, stderr := cli(t, "compare", realS, fakeS, "--metrics", "fid,mmd", "--json", flag, ";")
		if code != 0 || got != want {
			t.Errorf("%s ';': exit %d %s\n%s\nwant\n%s", flag, code, stderr, got, want)
		}
	}
	code, _, stderr = cli(t, "cka", realS, realS, "--sep", ";;")
	requireUsageError(t, code, stderr, `--sep ";;"`)

	// mse fit and estimate read their tables with --sep.
	train := make([][]float64, 60)
	for i := range train {
		x := r.NormFloat64()
		train[i] = []float64{x + 0.1*r.NormFloat64(), x, x}
	}
	th := []string{"y", "pred", "x"}
	trainS := writeSep(t, dir, "train.csv", ";", th, train)
	model := filepath.Join(dir, "check.json")
	fit := []string{"mse", "fit", "--train", trainS, "--target", "y", "--prediction", "pred", "--model", model, "--epochs", "10"}
	code, _, stderr = cli(t, fit...)
	requireUsageError(t, code, stderr, "train.csv line 1", "set --sep ';'")
	if code, _, stderr := cli(t, append(fit, "--sep", ";")...); code != 0 {
		t.Fatalf("mse fit --sep ';': exit %d %s", code, stderr)
	}
	data := writeSep(t, dir, "data.csv", "\t", th[1:], rows(40, 2, 0))
	est := []string{"mse", "estimate", "--model", model, "--data", data, "--chunk-size", "20"}
	code, _, stderr = cli(t, est...)
	requireUsageError(t, code, stderr, "the separator looks like a tab, not ',': set --sep tab")
	if code, _, stderr := cli(t, append(est, "--sep", "tab")...); code != 0 {
		t.Errorf("mse estimate --sep tab: exit %d %s", code, stderr)
	}
}
