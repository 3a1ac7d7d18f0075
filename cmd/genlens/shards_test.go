package main

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/genlens/genlens/dataio"
	"github.com/genlens/genlens/internal/testkit/shareddata"
	"github.com/genlens/genlens/job/imagejob"
	"github.com/genlens/genlens/metric/frechet"
)

// fixtureFolder copies the random-weight fixture's 16 images into a new
// folder and returns it with the weights.
func fixtureFolder(t *testing.T) (dir, weights string) {
	t.Helper()
	fx := shareddata.Path(t, "fixtures/inception_random")
	dir = filepath.Join(t.TempDir(), "imgs")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 16; i++ {
		name := fmt.Sprintf("img%03d.png", i)
		b, err := os.ReadFile(filepath.Join(fx, "images", name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir, filepath.Join(fx, "inception_random.pth")
}

// noShardEnv is the environment without any shard index.
func noShardEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, imagejob.EnvJobCompletionIndex+"=") || strings.HasPrefix(kv, "SLURM_ARRAY_") {
			continue
		}
		env = append(env, kv)
	}
	return env
}

func relFrobenius(a, b []float64) float64 {
	var num, den float64
	for i := range a {
		num += (a[i] - b[i]) * (a[i] - b[i])
		den += b[i] * b[i]
	}
	return math.Sqrt(num / den)
}

// TestSimulatedIndexedJob is a Kubernetes Indexed Job on one machine: K
// processes of the real binary, each told its shard only by
// JOB_COMPLETION_INDEX, write their parts; the merge equals the
// single-pass statistics to 1e-9 and gives FID 0 against them.
func TestSimulatedIndexedJob(t *testing.T) {
	bin := serveBinary(t)
	dir, weights := fixtureFolder(t)
	work := t.TempDir()
	cache := filepath.Join(work, "cache")
	const k = 3
	var wg sync.WaitGroup
	errs := make([]error, k)
	outs := make([]string, k)
	for i := 0; i < k; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			c := exec.Command(bin, "stats", "--in", dir, "--shards", fmt.Sprint(k), "--dims", "64", "--weights", weights,
				"--workers", "1", "--out", filepath.Join(work, "parts", "part-{shard}.npz"))
			c.Env = append(noShardEnv(), fmt.Sprintf("%s=%d", imagejob.EnvJobCompletionIndex, i), "GENLENS_CACHE="+cache)
			out, err := c.CombinedOutput()
			outs[i] = string(out)
			if err != nil {
				errs[i] = fmt.Errorf("process %d: %v\n%s", i, err, out)
			}
		}(i)
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < k; i++ {
		if !strings.Contains(outs[i], fmt.Sprintf("part %d of %d shards", i, k)) {
			t.Errorf("process %d printed %q", i, outs[i])
		}
	}
	merged := filepath.Join(work, "merged.npz")
	c := exec.Command(bin, "stats", "merge", filepath.Join(work, "parts", "*.npz"), "--out", merged)
	c.Env = noShardEnv()
	if out, err := c.CombinedOutput(); err != nil || !strings.Contains(string(out), "from 16 rows in 3 parts of 3 shards") {
		t.Fatalf("merge: %v\n%s", err, out)
	}
	single := filepath.Join(work, "single.npz")
	c = exec.Command(bin, "stats", "--in", dir, "--dims", "64", "--weights", weights, "--out", single)
	c.Env = append(noShardEnv(), "GENLENS_CACHE="+cache)
	if out, err := c.CombinedOutput(); err != nil {
		t.Fatalf("single pass: %v\n%s", err, out)
	}
	m, err := frechet.ReadStats(merged)
	if err != nil {
		t.Fatal(err)
	}
	s, err := frechet.ReadStats(single)
	if err != nil {
		t.Fatal(err)
	}
	em := relFrobenius(m.Mu, s.Mu)
	es := relFrobenius(symDenseData(m.Sigma), symDenseData(s.Sigma))
	t.Logf("merged vs single pass: relative difference mean %.2g, sigma %.2g", em, es)
	if m.N != 16 || em > 1e-9 || es > 1e-9 {
		t.Fatalf("merged n %d, relative difference mean %.3g, sigma %.3g", m.N, em, es)
	}
	for key, want := range map[string]string{"embedder": "inception-v3", "mode": "pytorch-fid", "dims": "64"} {
		if got, err := dataio.ReadNPZText(dataio.HostFS, merged, key); err != nil || got != want {
			t.Errorf("merged %s = %q, %v; want %q", key, got, err, want)
		}
	}
	// compare reads the merged file like any statistics file.
	code, stdout, stderr := cli(t, "compare", "--real", single, "--fake", merged, "--json")
	if code != 0 || !strings.Contains(stdout, `"fid"`) {
		t.Fatalf("compare: exit %d\n%s%s", code, stdout, stderr)
	}
}

func symDenseData(s interface{ At(i, j int) float64 }) []float64 {
	type dimmer interface{ SymmetricDim() int }
	d := s.(dimmer).SymmetricDim()
	out := make([]float64, 0, d*d)
	for i := 0; i < d; i++ {
		for j := 0; j < d; j++ {
			out = append(out, s.At(i, j))
		}
	}
	return out
}

// TestStatsShardsCmd: the shard index from the flag and the environment,
// its errors, and the refusals of merge (exit 2, the file named, nothing
// written).
func TestStatsShardsCmd(t *testing.T) {
	dir := t.TempDir()
	x := make([]float64, 30*3)
	for i := range x {
		x[i] = math.Sin(float64(i * i))
	}
	feats := filepath.Join(dir, "x.npy")
	if err := dataio.WriteNPY(feats, &dataio.Array{Shape: []int{30, 3}, Data: x}); err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{imagejob.EnvJobCompletionIndex, imagejob.EnvSlurmArrayTaskID, imagejob.EnvSlurmArrayTaskMin} {
		t.Setenv(v, "")
	}
	part := func(i int) string { return filepath.Join(dir, fmt.Sprintf("p%d.npz", i)) }
	// Flag, Kubernetes and Slurm each give one shard.
	if code, _, stderr := cli(t, "stats", "--in", feats, "--shards", "3", "--shard", "0", "--out", part(0)); code != 0 {
		t.Fatal(stderr)
	}
	t.Setenv(imagejob.EnvJobCompletionIndex, "1")
	if code, _, stderr := cli(t, "stats", "--in", feats, "--shards", "3", "--out", filepath.Join(dir, "p{shard}.npz")); code != 0 {
		t.Fatal(stderr)
	}
	t.Setenv(imagejob.EnvJobCompletionIndex, "")
	t.Setenv(imagejob.EnvSlurmArrayTaskID, "3")
	t.Setenv(imagejob.EnvSlurmArrayTaskMin, "1")
	if code, _, stderr := cli(t, "stats", "--in", feats, "--shards", "3", "--out", filepath.Join(dir, "p{shard}.npz")); code != 0 {
		t.Fatal(stderr)
	}
	for i := 0; i < 3; i++ {
		p, err := frechet.ReadPart(dataio.HostFS, part(i))
		if err != nil || p.Shard != i || p.N != 10 {
			t.Fatalf("part %d: %+v, %v", i, p, err)
		}
	}
	t.Setenv(imagejob.EnvSlurmArrayTaskID, "")
	code, _, stderr := cli(t, "stats", "--in", feats, "--shards", "3", "--out", filepath.Join(dir, "q.npz"))
	for _, want := range []string{"--shard", imagejob.EnvJobCompletionIndex, imagejob.EnvSlurmArrayTaskID} {
		if code != 2 || !strings.Contains(stderr, want) {
			t.Errorf("no index: exit %d, %q lacks %q", code, stderr, want)
		}
	}
	code, _, stderr = cli(t, "stats", "--in", feats, "--shards", "3", "--shard", "3", "--out", filepath.Join(dir, "q.npz"))
	if code != 2 || !strings.Contains(stderr, "out of range") || !strings.Contains(stderr, imagejob.EnvSlurmArrayTaskID) {
		t.Errorf("index 3 of 3: exit %d, %q", code, stderr)
	}

	out := filepath.Join(dir, "merged.npz")
	copyPart := filepath.Join(dir, "copy.npz")
	b, _ := os.ReadFile(part(1))
	os.WriteFile(copyPart, b, 0o644)
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"same path twice", []string{part(0), part(1), part(2), part(0)}, part(0)},
		{"same shard twice", []string{part(0), part(1), part(2), copyPart}, copyPart},
		{"missing shard", []string{part(0), part(2)}, "missing shard 1 of 3"},
		{"not a part", []string{part(0), feats}, feats},
		{"no parts", nil, "name the part files to merge"},
	} {
		code, _, stderr := cli(t, append(append([]string{"stats", "merge"}, tc.args...), "--out", out)...)
		if code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%s: exit %d, %q: want exit 2 naming %q", tc.name, code, stderr, tc.want)
		}
		if _, err := os.Stat(out); err == nil {
			t.Fatalf("%s: a refused merge wrote --out", tc.name)
		}
	}
	code, stdout, stderr := cli(t, "stats", "merge", part(2), part(0), "--out", out, "--allow-missing")
	if code != 0 || !strings.Contains(stdout, "missing 1") || !strings.Contains(stderr, "missing 1") || !strings.HasPrefix(stdout, "wrote "+out+": mu (3)") {
		t.Fatalf("allow missing: exit %d\n%s%s", code, stdout, stderr)
	}
	// Argument order changes no byte of the output.
	os.Remove(out)
	cli(t, "stats", "merge", part(0), part(1), part(2), "--out", out)
	a, _ := os.ReadFile(out)
	out2 := filepath.Join(dir, "merged2.npz")
	cli(t, "stats", "merge", part(2), part(0), part(1), "--out", out2)
	if b, _ := os.ReadFile(out2); len(a) == 0 || !bytes.Equal(a, b) {
		t.Fatal("the order of the parts changed the merged file")
	}
}

// TestFeaturesShardsPattern: 'features --shards' writes one file per
// shard that together hold every image once, and compare reads them from
// a quoted pattern.
func TestFeaturesShardsPattern(t *testing.T) {
	dir, weights := fixtureFolder(t)
	work := t.TempDir()
	for _, v := range []string{imagejob.EnvJobCompletionIndex, imagejob.EnvSlurmArrayTaskID, imagejob.EnvSlurmArrayTaskMin} {
		t.Setenv(v, "")
	}
	rows := 0
	os.Mkdir(filepath.Join(work, "parts"), 0o755)
	for i := 0; i < 3; i++ {
		code, _, stderr := cli(t, "features", dir, "--dims", "64", "--weights", weights, "--shards", "3", "--shard", fmt.Sprint(i),
			"--out", filepath.Join(work, "parts", "f-{shard}.npy"))
		if code != 0 {
			t.Fatal(stderr)
		}
		a, err := dataio.ReadArray(filepath.Join(work, "parts", fmt.Sprintf("f-%d.npy", i)), dataio.ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		rows += a.Shape[0]
	}
	if rows != 16 {
		t.Fatalf("the shards hold %d rows, want 16", rows)
	}
	whole := filepath.Join(work, "whole.npy")
	if code, _, stderr := cli(t, "features", dir, "--dims", "64", "--weights", weights, "--out", whole); code != 0 {
		t.Fatal(stderr)
	}
	code, stdout, stderr := cli(t, "compare", "--real", whole, "--fake", filepath.Join(work, "parts", "*.npy"), "--metrics", "fid,kid", "--kid-subset-size", "8", "--json")
	if code != 0 || !strings.Contains(stdout, `"fid"`) {
		t.Fatalf("compare with a pattern: exit %d\n%s%s", code, stdout, stderr)
	}
}
