package main

import (
	"io"
	"io/fs"
	"strings"
	"testing"

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
