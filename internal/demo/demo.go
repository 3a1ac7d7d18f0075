package demo

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"path/filepath"

	"github.com/genlens/genlens/internal/atomicfile"
	"github.com/genlens/genlens/internal/report"
	"github.com/genlens/genlens/job"
)

// Section is one part of the tour. Run prints its summary to w, writes its
// charts into dir and returns its part of the report.
type Section struct {
	Name string
	Run  func(ctx context.Context, w io.Writer, dir string, r *rand.Rand) (report.Section, error)
}

// Sections returns the tour in the order it runs: one section per method,
// grouped by the paper it implements.
func Sections() []Section {
	return []Section{
		{"kernel entropy", entropySection},
		{"bias-variance decomposition", decomposeSection},
		{"correlation across training", correlateSection},
		{"online selection", selectionSection},
		{"FID, KID and precision/recall", fidSection},
		{"pixel clusters", disentangleSection},
		{"hallucination rate", hallucinationSection},
		{"MSE monitoring", mseSection},
	}
}

// Options configures Run.
type Options struct {
	Seed uint64 // seeds every section's data
	// Version and Date are shown under the report's title.
	Version, Date string
	// Progress, when not nil, is called after each section with the
	// number done out of the total.
	Progress func(done, total int)
}

// Run runs every section of Sections in order, printing summaries to w,
// and writes the report with its charts to dir, which must exist.
func Run(ctx context.Context, w io.Writer, dir string, o Options) error {
	r := rand.New(rand.NewPCG(o.Seed, 0x9e3779b97f4a7c15))
	rep := &report.Report{
		Title:      "genlens demo",
		Version:    o.Version,
		Date:       o.Date,
		Intro:      intro,
		References: References,
	}
	sections := Sections()
	for i, s := range sections {
		if err := ctx.Err(); err != nil {
			return err
		}
		sec, err := s.Run(ctx, w, dir, r)
		if err != nil {
			return fmt.Errorf("demo: %s: %w", s.Name, err)
		}
		rep.Sections = append(rep.Sections, sec)
		if o.Progress != nil {
			o.Progress(i+1, len(sections))
		}
	}
	return rep.Write(dir)
}

var intro = []string{
	"This report runs every method of genlens on synthetic data generated in code, where the right answer is known, so that each chart can be checked against it. Each section says what was simulated, shows what the method found and gives the command that runs the same method on your own files.",
	"Regenerate it with: genlens demo --out DIR --seed N (the same seed gives the same numbers).",
}

// References are the papers the tour's methods implement, in the order
// the sections use them.
var References = []string{
	"Sebastian G. Gruber and Florian Buettner. A Bias-Variance-Covariance Decomposition of Kernel Scores for Generative Models. ICML 2024.",
	"Xiaoyan Hu, Ho-fung Leung and Farzan Farnia. An Optimism-based Approach to Online Evaluation of Generative Models. arXiv preprint, 2024.",
	"Martin Heusel, Hubert Ramsauer, Thomas Unterthiner, Bernhard Nessler and Sepp Hochreiter. GANs Trained by a Two Time-Scale Update Rule Converge to a Local Nash Equilibrium. NeurIPS 2017.",
	"Sebastian G. Gruber, Pascal Tobias Ziegler and Florian Buettner. Disentangling Mean Embeddings for Better Diagnostics of Image Generators. arXiv preprint, 2024.",
	"Andrew Jesson, Nicolas Beltran-Velez, Quentin Chu, Sweta Karlekar, Jannik Kossen, Yarin Gal, John P. Cunningham and David Blei. Estimating the Hallucination Rate of Generative AI. NeurIPS 2024.",
	"A One-Step MSE Estimation of Models in Production. Anonymous authors, paper under double-blind review, 2024.",
}

// writeArtifact renders a job's artifact into dir, atomically.
func writeArtifact(dir string, a job.Artifact) error {
	path := filepath.Join(dir, a.Name)
	if err := atomicfile.Write(path, a.Write); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}
