package main

import (
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/genlens/genlens/job"
)

// positional binds the arguments a of cmd, in order, to the flags named:
// the i-th argument is the value of --names[i], as if given with it
// (`genlens compare real/ fake/` is `--real real/ --fake fake/`, as
// `python -m pytorch_fid real/ fake/` takes them). An argument whose flag
// is given too, with another value, is a bad field: the command line
// cannot tell which one was meant. The arity is the command's Args
// (cobra.MaximumNArgs(len(names))).
//
// A command with commands under it ("stats", over "stats merge") reads a
// first argument that is no file and is a typo of one of them as that
// typo ("genlens stats mrege").
func positional(cmd *cobra.Command, a []string, names ...string) error {
	if len(a) > 0 && cmd.HasSubCommands() {
		cmd.SuggestionsMinimumDistance = 2
		if _, err := os.Stat(a[0]); err != nil && len(cmd.SuggestionsFor(a[0])) > 0 {
			return notACommand(cmd, a[0])
		}
	}
	for i, v := range a {
		if i >= len(names) {
			return badUsage("%s: %d arguments, at most %d (%s)", cmd.Name(), len(a), len(names), "--"+strings.Join(names, ", --"))
		}
		fl := cmd.Flags().Lookup(names[i])
		if fl.Changed && fl.Value.String() != v {
			field := strings.ReplaceAll(names[i], "-", "_")
			return job.Fieldf(field, "%s: the argument %s and {%s} %s disagree; give {%s} once, as an argument or as the flag", cmd.Name(), v, field, fl.Value.String(), field)
		}
		if err := cmd.Flags().Set(names[i], v); err != nil {
			return badUsage("%s: argument %d (%s): %v", cmd.Name(), i+1, v, err)
		}
	}
	return nil
}
