package demo

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestDemoDisentangleSection(t *testing.T) {
	dir := t.TempDir()
	var w bytes.Buffer
	sec, err := disentangleSection(context.Background(), &w, dir, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	for _, img := range sec.Images {
		if st, err := os.Stat(filepath.Join(dir, img.File)); err != nil || st.Size() == 0 {
			t.Errorf("demo did not write %s", img.File)
		}
	}
	if len(sec.Tables) != 1 || len(sec.Tables[0].Rows) != 4 {
		t.Fatalf("demo table: %+v", sec.Tables)
	}
	// Every face region was found as a cluster, and each flaw is traced
	// to its region.
	for _, region := range []string{"background", "hair", "face", "eyes", "mouth"} {
		if !strings.Contains(strings.Join(sec.Tables[0].Header, " "), region) {
			t.Errorf("no cluster for the %s: header %v", region, sec.Tables[0].Header)
		}
	}
	text := w.String()
	if !strings.Contains(text, "ckpt 3: ") || !strings.Contains(strings.Split(text, "ckpt 3: ")[1], "(eyes)") ||
		!strings.Contains(strings.Split(text, "ckpt 4: ")[1], "(background)") {
		t.Errorf("demo summary does not trace the flaws:\n%s", text)
	}
}

// The selection section runs genlens select's default bonus, auto
// (fducb2025 at its 16 dimensions), and says so in its table and line.
func TestSelectionDemoSection(t *testing.T) {
	var w strings.Builder
	sec, err := selectionSection(context.Background(), &w, t.TempDir(), rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	const want = "fid-ucb's bonus: fducb2025"
	if len(sec.Tables) != 1 || !strings.Contains(sec.Tables[0].Caption, want) || !strings.Contains(w.String(), want) {
		t.Errorf("section %+v, line %q: want %q", sec.Tables, w.String(), want)
	}
	t.Logf("%s", w.String())
}

func TestPHRDemoSection(t *testing.T) {
	dir := t.TempDir()
	var w strings.Builder
	start := time.Now()
	s, err := hallucinationSection(context.Background(), &w, dir, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("demo section in %v:\n%s", time.Since(start), w.String())
	if len(s.Tables) != 1 || len(s.Tables[0].Rows) != 6 || len(s.Images) != 1 {
		t.Errorf("section %+v", s)
	}
	if _, err := os.Stat(filepath.Join(dir, s.Images[0].File)); err != nil {
		t.Error(err)
	}
}

func TestMSEDemoSection(t *testing.T) {
	dir := t.TempDir()
	var out strings.Builder
	sec, err := mseSection(context.Background(), &out, dir, rand.New(rand.NewPCG(1, 0x9e3779b97f4a7c15)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "mse_monitoring.png")); err != nil {
		t.Error("no chart")
	}
	// The console line ends one sentence before the story starts the next.
	if line := out.String(); !strings.Contains(line, " days late. The estimate") || strings.Contains(line, "; The") {
		t.Errorf("console line: %q", line)
	}
	rows := sec.Tables[0].Rows
	if len(rows) != 24 {
		t.Fatalf("%d days", len(rows))
	}
	// The estimate rises with the drift, and alerts on days whose labels
	// have not arrived (days 17-23).
	var early, late float64
	var alertsUnlabelled int
	for d, r := range rows {
		var v float64
		fmt.Sscan(r[2], &v)
		if d < 10 {
			early += v / 10
		}
		if d >= 17 {
			late += v / 7
			if r[5] == "ALERT" && r[4] == "(not yet)" {
				alertsUnlabelled++
			}
		}
	}
	// No day before the drift is marked an extrapolation (a shift of 1.2
	// puts only about 3% of rows beyond the range of 1,000 reference
	// rows, below the 5% limit), while the KS test sees the last days
	// drift.
	for d, r := range rows {
		var ks, p float64
		fmt.Sscanf(r[7], "%g (%g)", &ks, &p)
		if d < 10 && strings.Contains(r[6], "EXTRAPOLATING") || d >= 21 && !(p < 1e-4) {
			t.Errorf("day %d: out of reference %q, KS %q", d, r[6], r[7])
		}
	}
	if late < 1.5*early || alertsUnlabelled < 5 {
		t.Errorf("estimate %.2f before the drift, %.2f at its end, %d alerts before labels", early, late, alertsUnlabelled)
	}
	if !strings.Contains(out.String(), "mse monitoring") {
		t.Errorf("summary: %q", out.String())
	}
}

// The tour is an explicit list: one section per method, in the order of
// the report, each writing what its section shows.
func TestRunWritesTheTour(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every method")
	}
	dir := t.TempDir()
	var w strings.Builder
	var ticks []int
	err := Run(context.Background(), &w, dir, Options{Seed: 7, Version: "genlens test", Date: "2026-11-25",
		Progress: func(done, total int) { ticks = append(ticks, done*10+total) }})
	if err != nil {
		t.Fatal(err)
	}
	if len(ticks) != len(Sections()) || ticks[0] != 18 || ticks[7] != 88 {
		t.Errorf("progress calls %v, want 1/8 ... 8/8", ticks)
	}
	md, err := os.ReadFile(filepath.Join(dir, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"genlens test · 2026-11-25", "**Contents**", "8. [", "FID, KID and precision/recall", "genlens compare --real real_imgs/ --fake gen_imgs/", "Heusel", "## References", "Jesson", "Gruber & Buettner"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
	if strings.Contains(strings.ToLower(string(md)), "seed 00") {
		t.Error("report cites a paper as 'seed 00x'")
	}
	entries, _ := os.ReadDir(dir)
	pngs := 0
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".png") {
			pngs++
		}
	}
	if pngs < 10 {
		t.Errorf("%d charts written, want at least 10", pngs)
	}
	// A cancelled context stops the tour before its next section.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := Run(ctx, io.Discard, t.TempDir(), Options{Seed: 7}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled run: %v", err)
	}
}

// The FID section: FID from samples tracks the closed-form Fréchet
// distance (biased upwards for the faithful generator, whose true
// distance is 0), KID is near 0 for it, and precision/recall say which
// way the collapsed and over-dispersed generators fail.
func TestFIDDemoSection(t *testing.T) {
	dir := t.TempDir()
	var w strings.Builder
	start := time.Now()
	sec, err := fidSection(context.Background(), &w, dir, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("FID section in %v:\n%s", time.Since(start), w.String())
	if _, err := os.Stat(filepath.Join(dir, "fid_samples.png")); err != nil {
		t.Error(err)
	}
	rows := sec.Tables[0].Rows
	if len(rows) != 4 {
		t.Fatalf("rows %v", rows)
	}
	num := func(s string) float64 {
		var v float64
		fmt.Sscanf(s, "%g", &v)
		return v
	}
	for _, row := range rows {
		exact, fid := num(row[1]), num(row[2])
		if math.Abs(fid-exact) > 0.1+0.1*exact {
			t.Errorf("%s: FID %v, true %v", row[0], fid, exact)
		}
	}
	if faithful := num(rows[0][2]); !(faithful > 0 && faithful < 0.1) || num(rows[0][1]) != 0 {
		t.Errorf("faithful: FID %s, true %s", rows[0][2], rows[0][1])
	}
	if kid := num(rows[0][3]); math.Abs(kid) > 1 {
		t.Errorf("faithful KID x 1000 %s", rows[0][3])
	}
	collapsed, over := rows[1], rows[2]
	if !(num(collapsed[4]) > num(collapsed[5])+0.2) || !(num(over[5]) > num(over[4])+0.1) {
		t.Errorf("precision/recall: collapsed %v, over-dispersed %v", collapsed, over)
	}
}
