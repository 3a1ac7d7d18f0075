package main

import (
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// paperAsSeed matches the ways an internal name for a paper ("seed 000",
// "the seed's Figure 3", "Seed 004") could leak into the product. Papers
// are cited by authors, title, year and venue; "seed" is kept for random
// number generators only.
var paperAsSeed = regexp.MustCompile(`(?i)\bseeds?[ _]?00\d|\bseed's|\bthe seed (hides|paper|text)|seeds/`)

// No Go file, Markdown file or help text of the module calls a paper a
// seed, and the module has a LICENSE.
func TestNoPaperCalledSeed(t *testing.T) {
	root := filepath.Join("..", "..")
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Skip("module root not found:", err)
	}
	if fi, err := os.Stat(filepath.Join(root, "LICENSE")); err != nil || fi.Size() < 100 {
		t.Errorf("LICENSE missing or empty: %v", err)
	}
	self := "citations_test.go"
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Name() == self || !(strings.HasSuffix(path, ".go") || strings.HasSuffix(path, ".md") || strings.HasSuffix(path, ".txt")) {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for i, line := range strings.Split(string(b), "\n") {
			if paperAsSeed.MatchString(line) {
				t.Errorf("%s:%d cites a paper as a seed: %s", path, i+1, strings.TrimSpace(line))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// The references live in docs/papers.md, which the README links.
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), "(docs/papers.md)") {
		t.Error("the README does not link docs/papers.md, where the references are")
	}
	papers, err := os.ReadFile(filepath.Join(root, "docs", "papers.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"## References", "Gruber and Florian Buettner", "ICML 2024", "Hu, Ho-fung Leung and Farzan Farnia", "Jesson", "NeurIPS 2024", "One-Step MSE Estimation", "Ziegler"} {
		if !strings.Contains(string(papers), want) {
			t.Errorf("docs/papers.md References lack %q", want)
		}
	}
}

// Every command's help, all the way down, avoids the same words.
func TestHelpCitesNoSeed(t *testing.T) {
	var visit func(c *cobra.Command)
	n := 0
	visit = func(c *cobra.Command) {
		n++
		text := c.Short + "\n" + c.Long + "\n" + c.Example + "\n" + c.Flags().FlagUsages()
		if paperAsSeed.MatchString(text) {
			t.Errorf("%s: help cites a paper as a seed: %q", c.CommandPath(), paperAsSeed.FindString(text))
		}
		for _, sub := range c.Commands() {
			visit(sub)
		}
	}
	visit(newRoot(io.Discard, io.Discard))
	if n < 10 {
		t.Errorf("visited %d commands only", n)
	}
}
