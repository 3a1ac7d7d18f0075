package main

import (
	"embed"
	"strings"

	"github.com/spf13/cobra"
)

// The long help of each command is prose, kept in help/NAME.txt (NAME the
// command's path under genlens with "-" for spaces: mse-fit.txt) where it
// reads as it prints: the description, then, after a line "Examples:",
// the examples.
//
//go:embed help/*.txt
var helpFiles embed.FS

// setHelp gives c and every command under it that has a help file
// (help/NAME.txt) its description and examples.
func setHelp(c *cobra.Command) {
	name := strings.ReplaceAll(strings.TrimPrefix(c.CommandPath(), "genlens "), " ", "-")
	if _, err := helpFiles.Open("help/" + name + ".txt"); err == nil {
		c.Long, c.Example = helpText(name), helpExamples(name)
	}
	for _, s := range c.Commands() {
		setHelp(s)
	}
}

// helpSections returns the description and the examples of help/name.txt;
// a missing file is a bug of the build, found by any test that builds the
// commands.
func helpSections(name string) (long, examples string) {
	b, err := helpFiles.ReadFile("help/" + name + ".txt")
	if err != nil {
		panic("genlens: no help text: " + err.Error())
	}
	long, examples, _ = strings.Cut(strings.TrimSuffix(string(b), "\n"), "\n\nExamples:\n")
	return long, examples
}

// helpText is the description of help/name.txt (cobra's Long); a
// builder may set it, as setHelp does.
func helpText(name string) string { long, _ := helpSections(name); return long }

// helpExamples is the examples of help/name.txt (cobra's Example).
func helpExamples(name string) string { _, ex := helpSections(name); return ex }
