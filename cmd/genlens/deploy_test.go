package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/genlens/genlens/job/imagejob"
	"github.com/genlens/genlens/metric/frechet"
)

// yamlField returns the value of the first "key: value" line of a
// manifest, comments stripped.
func yamlField(t *testing.T, text, key string) string {
	t.Helper()
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(stripComment(line))
		if v, ok := strings.CutPrefix(line, key+":"); ok {
			return strings.TrimSpace(v)
		}
	}
	t.Fatalf("no %q in the manifest", key)
	return ""
}

func stripComment(line string) string {
	if i := strings.Index(line, " #"); i >= 0 {
		return line[:i]
	}
	if strings.HasPrefix(strings.TrimSpace(line), "#") {
		return ""
	}
	return line
}

// containerArgs returns the "args:" list of a manifest's container.
func containerArgs(t *testing.T, text string) []string {
	t.Helper()
	var args []string
	in := false
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		line := stripComment(sc.Text())
		trimmed := strings.TrimSpace(line)
		switch {
		case trimmed == "args:":
			in = true
		case in && strings.HasPrefix(trimmed, "- "):
			args = append(args, strings.TrimSpace(strings.TrimPrefix(trimmed, "- ")))
		case in && trimmed == "":
		case in:
			return args
		}
	}
	t.Fatal("no args list in the manifest")
	return nil
}

// TestKubernetesManifests runs the README's Indexed Job on one machine:
// the container arguments of deploy/kubernetes/stats-indexed-job.yaml in
// one process per completion index (JOB_COMPLETION_INDEX set as
// Kubernetes sets it), with the volumes mapped to temporary folders, then
// the merge Job's arguments; the result equals the single-pass statistics
// to 1e-9 and FID between them is 0.
func TestKubernetesManifests(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the 16 shards of the manifest; skipped in -short mode")
	}
	images, weights := fixtureFolder(t)
	root := filepath.Join("..", "..", "deploy", "kubernetes")
	shard, err := os.ReadFile(filepath.Join(root, "stats-indexed-job.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	merge, err := os.ReadFile(filepath.Join(root, "stats-merge-job.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	k, err := strconv.Atoi(yamlField(t, string(shard), "completions"))
	if err != nil {
		t.Fatal(err)
	}
	if mode := yamlField(t, string(shard), "completionMode"); mode != "Indexed" {
		t.Fatalf("completionMode %q", mode)
	}
	parts := t.TempDir() // the manifest's parts/real/ is made by the first pod
	mapPaths := func(args []string) []string {
		out := make([]string, len(args))
		for i, a := range args {
			a = strings.ReplaceAll(a, "/data/images", images)
			out[i] = strings.ReplaceAll(a, "/parts/", parts+"/")
		}
		return out
	}
	args := mapPaths(containerArgs(t, string(shard)))
	if !strings.Contains(strings.Join(args, " "), "--shards="+strconv.Itoa(k)) {
		t.Fatalf("args %v: --shards differs from completions: %d", args, k)
	}
	// The 64-d feature keeps the 16 parts small (pool3's are 33.6 MB
	// each); the split, the index and the merge are the same.
	args = append(args, "--dims=64")
	t.Setenv("GENLENS_WEIGHTS", weights)
	t.Setenv(imagejob.EnvSlurmArrayTaskID, "")
	for i := 0; i < k; i++ {
		t.Setenv(imagejob.EnvJobCompletionIndex, strconv.Itoa(i))
		if code, _, stderr := cli(t, args...); code != 0 {
			t.Fatalf("index %d: %v: exit %d: %s", i, args, code, stderr)
		}
	}
	t.Setenv(imagejob.EnvJobCompletionIndex, "")
	margs := mapPaths(containerArgs(t, string(merge)))
	code, stdout, stderr := cli(t, margs...)
	if code != 0 {
		t.Fatalf("merge %v: exit %d: %s", margs, code, stderr)
	}
	if !strings.Contains(stdout, `"parts": `+strconv.Itoa(k)) {
		t.Errorf("merge printed %s", stdout)
	}
	single := filepath.Join(t.TempDir(), "single.npz")
	if code, _, stderr := cli(t, "stats", "--in", images, "--dims", "64", "--out", single); code != 0 {
		t.Fatal(stderr)
	}
	m, err := frechet.ReadStats(filepath.Join(parts, "real_stats.npz"))
	if err != nil {
		t.Fatal(err)
	}
	s, err := frechet.ReadStats(single)
	if err != nil {
		t.Fatal(err)
	}
	if em, es := relFrobenius(m.Mu, s.Mu), relFrobenius(symDenseData(m.Sigma), symDenseData(s.Sigma)); m.N != 16 || em > 1e-9 || es > 1e-9 {
		t.Fatalf("Indexed Job vs one pass: n %d, relative difference mean %.3g, sigma %.3g", m.N, em, es)
	}
	fid, err := frechet.Distance(m, s)
	if err != nil || fid > 1e-6 {
		t.Fatalf("FID between the Indexed Job's statistics and one pass: %v, %v", fid, err)
	}
}

// TestSlurmScripts runs deploy/slurm's array script once per task (two)
// with the environment Slurm gives it (an array starting at 1, so the
// minimum is subtracted), then the merge script, with the built binary on
// PATH.
func TestSlurmScripts(t *testing.T) {
	bin := serveBinary(t)
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	images, weights := fixtureFolder(t)
	parts := t.TempDir()
	out := filepath.Join(t.TempDir(), "real_stats.npz")
	root := filepath.Join("..", "..", "deploy", "slurm")
	path := filepath.Dir(bin) + string(os.PathListSeparator) + os.Getenv("PATH")
	env := append(noShardEnv(), "PATH="+path, "IMAGES="+images, "PARTS="+parts, "OUT="+out, "GENLENS_WEIGHTS="+weights,
		"SHARDS=2", "SLURM_CPUS_PER_TASK=1", "SLURM_JOB_ID=77", "TMPDIR="+t.TempDir())
	for task := 1; task <= 2; task++ {
		c := exec.Command("bash", filepath.Join(root, "stats-array.sbatch"))
		c.Env = append(env, "SLURM_ARRAY_TASK_ID="+strconv.Itoa(task), "SLURM_ARRAY_TASK_MIN=1")
		if b, err := c.CombinedOutput(); err != nil {
			t.Fatalf("task %d: %v\n%s", task, err, b)
		}
	}
	c := exec.Command("bash", filepath.Join(root, "stats-merge.sbatch"))
	c.Env = env
	if b, err := c.CombinedOutput(); err != nil || !strings.Contains(string(b), `"shards": 2`) {
		t.Fatalf("merge: %v\n%s", err, b)
	}
	st, err := frechet.ReadStats(out)
	if err != nil || st.N != 16 {
		t.Fatalf("merged statistics: n %d, %v", st.N, err)
	}
}
