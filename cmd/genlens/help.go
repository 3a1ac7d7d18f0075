package main

import (
	"embed"
	"strings"
)

// The long help of each command is prose, kept in help/NAME.txt (NAME the
// command's path under genlens with "-" for spaces: mse-fit.txt) where it
// reads as it prints: the description, then, after a line "Examples:",
// the examples.
//
//go:embed help/*.txt
var helpFiles embed.FS

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

// helpText is the description of help/name.txt (cobra's Long).
func helpText(name string) string { long, _ := helpSections(name); return long }

// helpExamples is the examples of help/name.txt (cobra's Example).
func helpExamples(name string) string { _, ex := helpSections(name); return ex }
