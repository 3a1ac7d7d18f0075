package deploy_test

import (
	"crypto/rand"
	"fmt"
	"math"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/genlens/genlens/internal/testkit/shareddata"
	"github.com/genlens/genlens/metric/frechet"
)

// A real one-node Slurm cluster (Debian's slurmctld, slurmd and munge,
// which .ci/run installs) runs deploy/slurm/submit-stats.sh on the
// random-weight Inception fixture with 4 shards; the merged statistics
// equal a single pass. The daemons run as children of the test, on free
// loopback ports, with their configuration, state and munge key in a
// temporary directory, so nothing of the machine's own Slurm is touched.
func TestSlurmSubmitStats(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Slurm cluster; skipped in -short mode")
	}
	for _, bin := range []string{"slurmctld", "slurmd", "munged", "sbatch", "sinfo", "squeue"} {
		if _, err := exec.LookPath(bin); err != nil {
			t.Skipf("no %s on PATH: the Slurm test needs Debian's slurmctld, slurmd, slurm-client and munge (.ci/run installs them)", bin)
		}
	}
	if os.Geteuid() != 0 {
		t.Skip("the Slurm test runs slurmd, which needs root")
	}
	fixture := shareddata.Path(t, "fixtures/inception_random")
	images := filepath.Join(fixture, "images")
	weights := filepath.Join(fixture, "inception_random.pth")

	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	if out, err := exec.Command("go", "build", "-o", filepath.Join(bin, "genlens"), "../cmd/genlens").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	conf := startSlurm(t, dir)
	// The tasks' feature cache lives under TMPDIR, in a folder named for
	// the job id, which every fresh cluster starts again at 1: under the
	// machine's /tmp the tasks would read features an earlier build
	// cached there, not compute them.
	tmp := filepath.Join(dir, "tmp")
	if err := os.Mkdir(tmp, 0o755); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(),
		"TMPDIR="+tmp,
		"SLURM_CONF="+conf,
		"PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"),
		"GENLENS_WEIGHTS="+weights,
		"GENLENS_CACHE="+filepath.Join(dir, "cache"),
		"IMAGES="+images,
		"PARTS="+filepath.Join(dir, "parts"),
		"OUT="+filepath.Join(dir, "merged.npz"),
		"SHARDS=4",
	)
	submit, err := filepath.Abs("slurm/submit-stats.sh")
	if err != nil {
		t.Fatal(err)
	}
	run := func(extra ...string) (string, error) {
		cmd := exec.Command(submit)
		cmd.Dir = dir
		cmd.Env = append(append([]string{}, env...), extra...)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}

	// More CPUs per task than the node has: refused before submitting,
	// saying what to set, instead of an array pending forever.
	out, err := run("CPUS_PER_TASK=64")
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || !strings.Contains(out, "CPUS_PER_TASK=64") || !strings.Contains(out, "PartitionConfig") {
		t.Errorf("CPUS_PER_TASK=64 on a small node: %v\n%s", err, out)
	}
	if q := squeue(t, env); q != "" {
		t.Fatalf("the refused submission queued jobs:\n%s", q)
	}

	out, err = run("CPUS_PER_TASK=1", "MEM_PER_TASK=1G")
	if err != nil {
		t.Fatalf("submit-stats.sh: %v\n%s", err, out)
	}
	deadline := time.Now().Add(5 * time.Minute)
	for squeue(t, env) != "" {
		if time.Now().After(deadline) {
			t.Fatalf("jobs still queued after 5 minutes:\n%s\n%s", squeue(t, env), logs(dir))
		}
		time.Sleep(time.Second)
	}
	merged, err := frechet.ReadStats(filepath.Join(dir, "merged.npz"))
	if err != nil {
		t.Fatalf("merged statistics: %v\n%s", err, logs(dir))
	}

	single := exec.Command(filepath.Join(bin, "genlens"), "stats", "--in", images, "--out", filepath.Join(dir, "single.npz"))
	single.Env = env
	if out, err := single.CombinedOutput(); err != nil {
		t.Fatalf("single pass: %v\n%s", err, out)
	}
	want, err := frechet.ReadStats(filepath.Join(dir, "single.npz"))
	if err != nil {
		t.Fatal(err)
	}
	if merged.N != want.N || merged.Dim() != want.Dim() {
		t.Fatalf("merged n=%d dim=%d, single pass n=%d dim=%d", merged.N, merged.Dim(), want.N, want.Dim())
	}
	if d := maxRelDiff(merged.Mu, want.Mu); d > 1e-12 {
		t.Errorf("mu: merged differs from the single pass by %.3g relative", d)
	}
	if d := maxRelDiff(merged.Sigma.RawSymmetric().Data, want.Sigma.RawSymmetric().Data); d > 1e-12 {
		t.Errorf("sigma: merged differs from the single pass by %.3g relative", d)
	}
}

// startSlurm writes a one-node cluster's configuration in dir, starts
// munged, slurmctld and slurmd in the foreground as children of the test
// (stopped at cleanup) and waits until the node is idle. It returns the
// configuration file's path.
func startSlurm(t *testing.T, dir string) string {
	t.Helper()
	host, err := os.Hostname()
	if err != nil {
		t.Skipf("no host name: %v", err)
	}
	host, _, _ = strings.Cut(host, ".")
	state := filepath.Join(dir, "slurm")
	munge := filepath.Join(dir, "munge")
	for _, d := range []string{state, filepath.Join(state, "ctld"), filepath.Join(state, "spool"), munge} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	key := make([]byte, 1024)
	if _, err := rand.Read(key); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(munge, "key"), key, 0o600); err != nil {
		t.Fatal(err)
	}
	socket := filepath.Join(munge, "socket")
	ports := freePorts(t, 2)
	conf := filepath.Join(state, "slurm.conf")
	text := fmt.Sprintf(`ClusterName=genlenstest
SlurmctldHost=%[1]s
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=%[2]s
CredType=cred/munge
SlurmctldPort=%[3]d
SlurmdPort=%[4]d
StateSaveLocation=%[5]s/ctld
SlurmdSpoolDir=%[5]s/spool
SlurmctldPidFile=%[5]s/slurmctld.pid
SlurmdPidFile=%[5]s/slurmd.pid
SlurmctldLogFile=%[5]s/slurmctld.log
SlurmdLogFile=%[5]s/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
MailProg=/bin/true
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
ReturnToService=2
NodeName=%[1]s CPUs=%[6]d RealMemory=4096 State=UNKNOWN
PartitionName=test Nodes=ALL Default=YES MaxTime=INFINITE State=UP
`, host, socket, ports[0], ports[1], state, cpus())
	if err := os.WriteFile(conf, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	daemon(t, "munged", "--foreground", "--force", "--key-file="+filepath.Join(munge, "key"), "--socket="+socket,
		"--pid-file="+filepath.Join(munge, "pid"), "--log-file="+filepath.Join(munge, "log"), "--seed-file="+filepath.Join(munge, "seed"))
	waitFor(t, 10*time.Second, func() bool { _, err := os.Stat(socket); return err == nil }, "munged's socket", munge)
	daemon(t, "slurmctld", "-D", "-f", conf)
	daemon(t, "slurmd", "-D", "-f", conf)
	env := append(os.Environ(), "SLURM_CONF="+conf)
	waitFor(t, 60*time.Second, func() bool {
		cmd := exec.Command("sinfo", "--noheader", "--Node", "--format=%T")
		cmd.Env = env
		out, err := cmd.Output()
		return err == nil && strings.TrimSpace(string(out)) == "idle"
	}, "the node to be idle", state)
	return conf
}

// daemon starts a program in the foreground and stops it at cleanup:
// SIGTERM, then SIGKILL if it has not exited within 10 s.
func daemon(t *testing.T, name string, args ...string) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Skipf("cannot start %s: %v", name, err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
		}
	})
}

// waitFor polls ok until it holds; else the test skips (the daemons could
// not start here), printing the logs found in logDir.
func waitFor(t *testing.T, limit time.Duration, ok func() bool, what, logDir string) {
	t.Helper()
	for deadline := time.Now().Add(limit); !ok(); time.Sleep(200 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Skipf("the Slurm daemons did not start here (waited %v for %s):\n%s", limit, what, logs(logDir))
		}
	}
}

func squeue(t *testing.T, env []string) string {
	t.Helper()
	cmd := exec.Command("squeue", "--noheader")
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("squeue: %v\n%s", err, out)
	}
	return strings.TrimSpace(string(out))
}

// logs returns the tail of every log file under dir, for failure messages.
func logs(dir string) string {
	var b strings.Builder
	filepath.Walk(dir, func(path string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() || !(strings.HasSuffix(path, ".log") || strings.HasSuffix(path, ".out") || filepath.Base(path) == "log") {
			return nil
		}
		data, _ := os.ReadFile(path)
		lines := strings.Split(strings.TrimSpace(string(data)), "\n")
		fmt.Fprintf(&b, "== %s\n%s\n", path, strings.Join(lines[max(0, len(lines)-15):], "\n"))
		return nil
	})
	return b.String()
}

func freePorts(t *testing.T, n int) []int {
	t.Helper()
	var ports []int
	var ls []net.Listener
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	for _, l := range ls {
		l.Close()
	}
	return ports
}

// cpus is the number of CPUs slurmd will find: the node must declare no
// more, or slurmd refuses to register it.
func cpus() int {
	out, err := exec.Command("nproc", "--all").Output()
	if err != nil {
		return 1
	}
	var n int
	fmt.Sscan(string(out), &n)
	return max(n, 1)
}

func maxRelDiff(a, b []float64) float64 {
	var d, m float64
	for i := range a {
		d = math.Max(d, math.Abs(a[i]-b[i]))
		m = math.Max(m, math.Abs(b[i]))
	}
	if m == 0 {
		return d
	}
	return d / m
}
