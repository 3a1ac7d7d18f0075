package main

import (
	"io"
	"io/fs"
	"strings"
	"testing"

	"github.com/genlens/genlens/network/features"
	"github.com/genlens/genlens/network/inception"
	"github.com/genlens/genlens/network/vit"
	"github.com/spf13/cobra"
)

// Every help file is the help of the command its name says, and no
// command's help is empty.
func TestHelpFiles(t *testing.T) {
	byName := map[string]*cobra.Command{}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		byName[strings.ReplaceAll(strings.TrimPrefix(c.CommandPath(), "genlens "), " ", "-")] = c
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	walk(newRoot(io.Discard, io.Discard))
	files, _ := fs.Glob(helpFiles, "help/*.txt")
	if len(files) == 0 {
		t.Fatal("no help files embedded")
	}
	for _, f := range files {
		name := strings.TrimSuffix(strings.TrimPrefix(f, "help/"), ".txt")
		c, ok := byName[name]
		long, ex := helpSections(name)
		switch {
		case !ok:
			t.Errorf("%s: no command %q", f, strings.ReplaceAll(name, "-", " "))
		case c.Long != long || c.Example != ex:
			t.Errorf("%s: not the help of %q", f, c.CommandPath())
		case !strings.HasPrefix(long, c.Name()+" "):
			t.Errorf("%s: the description does not start with the command's name", f)
		}
	}
}

// The usage of the image flags is written out in the requests' tags: it
// must name every network --embedder accepts and the environment
// variables genlens reads.
func TestImageFlagsUsageIsCurrent(t *testing.T) {
	root := newRoot(io.Discard, io.Discard)
	for _, name := range []string{"features", "stats", "compare", "is", "select"} {
		c, _, err := root.Find([]string{name})
		if err != nil {
			t.Fatal(err)
		}
		fl := c.Flags()
		for _, n := range vit.Names() {
			if !strings.Contains(fl.Lookup("embedder").Usage, n) {
				t.Errorf("%s --embedder: %q does not name %s", name, fl.Lookup("embedder").Usage, n)
			}
		}
		if u := fl.Lookup("weights").Usage; !strings.Contains(u, "$"+inception.WeightsEnv+",") {
			t.Errorf("%s --weights: %q does not name $%s", name, u, inception.WeightsEnv)
		}
		if u := fl.Lookup("no-cache").Usage; !strings.Contains(u, "$"+features.CacheEnv+",") {
			t.Errorf("%s --no-cache: %q does not name $%s", name, u, features.CacheEnv)
		}
	}
}
