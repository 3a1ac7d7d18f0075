package main

import (
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// sepFlag registers --sep, the request field sep of a command that reads
// CSV files, also spelled --delimiter (pandas' and csv's two names for
// it): the second name is normalised to the first, so the help lists one
// flag and both spellings set it.
func sepFlag(cmd *cobra.Command, sep *string) {
	fl := cmd.Flags()
	fl.StringVar(sep, "sep", "", "field separator of CSV inputs: one character such as ';' or '|', or tab (default ','; also --delimiter)")
	prev := fl.GetNormalizeFunc()
	fl.SetNormalizeFunc(func(f *pflag.FlagSet, name string) pflag.NormalizedName {
		if name == "delimiter" {
			name = "sep"
		}
		return prev(f, name)
	})
}
