package main

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Positional arguments are the flags they stand for: the same document
// as the flag form; an argument and its flag that disagree are refused.
func TestPositionalArguments(t *testing.T) {
	dir := t.TempDir()
	r := rand.New(rand.NewPCG(3, 4))
	real := writeArray(t, dir, "real.npy", []int{40, 3}, randRows(r, 40, 3, 0))
	fake := writeArray(t, dir, "fake.npy", []int{30, 3}, randRows(r, 30, 3, 0.5))
	probs := writeArray(t, dir, "p.npy", []int{2, 2}, []float64{1, 0, 0, 1})
	for _, tc := range []struct{ pos, flags []string }{
		{[]string{"compare", real, fake, "--json"}, []string{"compare", "--real", real, "--fake", fake, "--json"}},
		{[]string{"compare", real, "--fake", fake, "--json"}, []string{"compare", "--real", real, "--fake", fake, "--json"}},
		{[]string{"compare", real, fake, "--real", real, "--json"}, []string{"compare", "--real", real, "--fake", fake, "--json"}},
		{[]string{"cka", real, real, "--json"}, []string{"cka", "--x", real, "--y", real, "--json"}},
		{[]string{"is", probs, "--splits", "1", "--json"}, []string{"is", "--probs", probs, "--splits", "1", "--json"}},
	} {
		c1, o1, e1 := cli(t, tc.pos...)
		c2, o2, e2 := cli(t, tc.flags...)
		if c1 != 0 || c2 != 0 || o1 != o2 {
			t.Errorf("%v: exit %d %q %s\n%v: exit %d %q %s", tc.pos, c1, o1, e1, tc.flags, c2, o2, e2)
		}
	}
	st1, st2 := filepath.Join(dir, "s1.npz"), filepath.Join(dir, "s2.npz")
	c1, o1, e1 := cli(t, "stats", real, "--out", st1)
	c2, o2, e2 := cli(t, "stats", "--in", real, "--out", st2)
	if c1 != 0 || c2 != 0 || strings.ReplaceAll(o1, st1, st2) != o2 {
		t.Errorf("stats: exit %d %q %s; with --in: exit %d %q %s", c1, o1, e1, c2, o2, e2)
	}
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"compare", real, fake, "--fake", real}, []string{"the argument " + fake + " and --fake " + real + " disagree"}},
		{[]string{"compare", fake, "--real", real}, []string{"--real"}},
		{[]string{"compare", real, fake, real}, []string{"at most 2"}},
		{[]string{"stats", fake, "--in", real, "--out", st1}, []string{"--in"}},
		{[]string{"entropy", "a.jsonl", "--in", "b.jsonl"}, []string{"--in"}},
		{[]string{"cka", real, fake, "--y", real}, []string{"--y"}},
		// A typo of stats merge is not a file named mrege.
		{[]string{"stats", "mrege", "--out", st1}, []string{`unknown command "mrege"`, `did you mean "merge"?`}},
	} {
		code, _, stderr := cli(t, tc.args...)
		requireUsageError(t, code, stderr, tc.want...)
	}
	// The help says so.
	for _, c := range []string{"compare", "stats", "cka", "is", "entropy"} {
		_, out, _ := cli(t, c, "--help")
		if !strings.Contains(out, "argument") {
			t.Errorf("%s --help does not mention its positional form:\n%s", c, out)
		}
	}
}

// A mistyped command is reported as an unknown command with the commands
// it is close to, before its flags are read; help of an unknown command is
// an error too.
func TestUnknownCommandDidYouMean(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"comapre", "--real", "a/"}, []string{`unknown command "comapre" for "genlens"`, `did you mean "compare"?`}},
		{[]string{"comapre"}, []string{`did you mean "compare"?`}},
		{[]string{"help", "nosuch"}, []string{`unknown command "nosuch" for "genlens"`}},
		{[]string{"help", "comapre"}, []string{`did you mean "compare"?`}},
		{[]string{"help", "mse", "fti"}, []string{`unknown command "fti" for "genlens mse"`, `did you mean "fit"?`}},
		{[]string{"mse", "fti", "--train", "x.csv"}, []string{`unknown command "fti" for "genlens mse"`, `did you mean "fit"?`}},
		{[]string{"hallucination", "rn", "--backend", "linear"}, []string{`unknown command "rn" for "genlens hallucination"`, `did you mean "run"?`}},
		{[]string{"--version", "verison"}, []string{`did you mean "version"?`}},
	} {
		code, stdout, stderr := cli(t, tc.args...)
		requireUsageError(t, code, stderr, tc.want...)
		if stdout != "" {
			t.Errorf("%v: stdout %q", tc.args, stdout)
		}
	}
	// What exists still runs.
	for _, a := range [][]string{{"help", "compare"}, {"help", "mse", "fit"}, {"help"}, {"mse"}, {"compare", "--help"}} {
		if code, out, stderr := cli(t, a...); code != 0 || out == "" {
			t.Errorf("%v: exit %d, stderr %q", a, code, stderr)
		}
	}
}

// With --json a failure is also a JSON document on stdout: the message,
// its kind and the request field at fault; the exit code is unchanged.
func TestJSONErrors(t *testing.T) {
	dir := t.TempDir()
	r := rand.New(rand.NewPCG(5, 6))
	real := writeArray(t, dir, "real.npy", []int{20, 3}, randRows(r, 20, 3, 0))
	bad := filepath.Join(dir, "bad.npy")
	if err := os.WriteFile(bad, []byte("not an array"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args  []string
		code  int
		kind  string
		field *string
		msg   string
	}{
		{[]string{"compare", "--real", real, "--json"}, 2, "field", ptr("real"), "--fake"},
		{[]string{"compare", real, "--real", bad, "--json"}, 2, "field", ptr("real"), "disagree"},
		{[]string{"compare", "--real", real, "--fake", bad, "--json"}, 2, "input", ptr("fake"), "bad.npy"},
		{[]string{"compare", bad, real, "--json"}, 2, "input", ptr("real"), "bad.npy"},
		{[]string{"cka", "--x", real, "--y", filepath.Join(dir, "none.npy"), "--json"}, 2, "input", ptr("y"), "none.npy"},
		{[]string{"compare", "--real", real, "--fake", real, "--bogus", "--json"}, 2, "field", nil, "unknown flag: --bogus"},
		{[]string{"comapre", "--json"}, 2, "field", nil, `did you mean "compare"?`},
		{[]string{"cka", "--x", real, "--y", real, "--kernel", "nope", "--json"}, 2, "field", ptr("kernel"), "--kernel"},
	} {
		code, stdout, stderr := cli(t, tc.args...)
		if code != tc.code {
			t.Errorf("%v: exit %d, want %d; stderr %q", tc.args, code, tc.code, stderr)
		}
		var got map[string]any
		if err := json.Unmarshal([]byte(stdout), &got); err != nil {
			t.Errorf("%v: stdout %q is not one JSON document: %v", tc.args, stdout, err)
			continue
		}
		if len(got) != 3 || got["kind"] != tc.kind || !strings.Contains(fmt.Sprint(got["error"]), tc.msg) {
			t.Errorf("%v: %v; want kind %s and an error with %q", tc.args, got, tc.kind, tc.msg)
		}
		if f, ok := got["field"]; !ok || (tc.field == nil && f != nil) || (tc.field != nil && f != *tc.field) {
			t.Errorf("%v: field %v, want %v", tc.args, f, tc.field)
		}
		// stderr still says it, as without --json.
		if !strings.Contains(stderr, tc.msg) {
			t.Errorf("%v: stderr %q", tc.args, stderr)
		}
	}
	// Without --json stdout stays empty.
	if code, stdout, _ := cli(t, "compare", "--real", real); code != 2 || stdout != "" {
		t.Errorf("without --json: exit %d, stdout %q", code, stdout)
	}
}

func ptr[T any](v T) *T { return &v }
