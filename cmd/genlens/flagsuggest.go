package main

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// pytorchFIDFlags are the flags of `python -m pytorch_fid` that genlens
// fid takes; typed to compare, they point there.
var pytorchFIDFlags = map[string]bool{"batch-size": true, "device": true, "num-workers": true, "save-stats": true, "dims": true}

// suggestFlag adds to an unknown-flag error of c the flags of c (its own
// and those it inherits) that the mistyped one is close to, as cobra does
// for commands: "unknown flag: --batch-siz; did you mean --batch-size?".
func suggestFlag(c *cobra.Command, err error) error {
	const prefix = "unknown flag: --"
	msg := err.Error()
	if !strings.HasPrefix(msg, prefix) {
		return err
	}
	name := strings.TrimPrefix(msg, prefix)
	var close []string
	visit := func(f *pflag.Flag) {
		if !f.Hidden && f.Deprecated == "" && flagClose(name, f.Name) && !slices.Contains(close, f.Name) {
			close = append(close, f.Name)
		}
	}
	c.Flags().VisitAll(visit)
	c.InheritedFlags().VisitAll(visit)
	switch len(close) {
	case 0:
	case 1:
		msg += fmt.Sprintf("; did you mean --%s?", close[0])
	default:
		msg += "; did you mean one of --" + strings.Join(close, ", --") + "?"
	}
	if pytorchFIDFlags[name] && c.Flags().Lookup(name) == nil && c.Root().CommandPath() != c.CommandPath() {
		msg += " ('genlens fid' takes pytorch-fid's flags)"
	}
	return errors.New(msg)
}

// flagClose reports whether typed is a likely misspelling of a flag name:
// at most two edits away, or one contains the other (--batch-size for
// --batch, --workers for --num-workers).
func flagClose(typed, name string) bool {
	if typed == name {
		return false
	}
	if len(typed) >= 4 && len(name) >= 4 && (strings.Contains(typed, name) || strings.Contains(name, typed)) {
		return true
	}
	return editDistance(typed, name) <= 2
}

// editDistance is the Levenshtein distance of a and b, by bytes (flag
// names are ASCII).
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
