package main

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/genlens/genlens/internal/fields"
	"github.com/genlens/genlens/internal/suggest"
)

// suggestFlag adds to an unknown-flag error of c the flags of c (its own
// and those it inherits) that the mistyped one is close to, as cobra does
// for commands: "unknown flag: --batch-siz; did you mean --batch-size?";
// and, for another tool's flag, genlens's word for it.
func suggestFlag(c *cobra.Command, err error) error {
	const prefix = "unknown flag: --"
	msg := err.Error()
	if !strings.HasPrefix(msg, prefix) {
		return err
	}
	name := strings.TrimPrefix(msg, prefix)
	var names []string
	visit := func(f *pflag.Flag) {
		if !f.Hidden && f.Deprecated == "" && !slices.Contains(names, f.Name) {
			names = append(names, f.Name)
		}
	}
	c.Flags().VisitAll(visit)
	c.InheritedFlags().VisitAll(visit)
	switch close := suggest.Among(name, names); len(close) {
	case 0:
	case 1:
		msg += fmt.Sprintf("; did you mean --%s?", close[0])
	default:
		msg += "; did you mean one of --" + strings.Join(close, ", --") + "?"
	}
	if suggest.PytorchFIDFlag(name) && c.Flags().Lookup(name) == nil && c.Root().CommandPath() != c.CommandPath() {
		msg += " ('genlens fid' takes pytorch-fid's flags)"
	}
	if tf, ok := suggest.TorchFidelityFlag(name); ok {
		msg += fmt.Sprintf("; torch-fidelity's --%s %s (its 'fidelity --input1 GEN --input2 REF --fid --kid --prc' is 'genlens compare --fake GEN --real REF --metrics fid,kid,prdc --mode tf')", name, fields.Render(tf, flagOf(c)))
	}
	return errors.New(msg)
}
