package main

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/genlens/genlens/internal/suggest"
)

// pytorchFIDFlags are the flags of `python -m pytorch_fid` that genlens
// fid takes; typed to compare, they point there.
var pytorchFIDFlags = map[string]bool{"batch-size": true, "device": true, "num-workers": true, "save-stats": true, "dims": true}

// torchFidelityFlags are torch-fidelity's flags (its fidelity command)
// with genlens's spelling: typed to a command without them, the error
// says it. Its input1 is the generated set and input2 the reference
// (metric_prc.py: "features_1 is GENERATED"); its Inception preprocessing
// is genlens's --mode tf.
var torchFidelityFlags = map[string]string{
	"input1": "is --fake here", "input2": "is --real here", "fid": "is --metrics fid here", "kid": "is --metrics kid here",
	"prc": "is --metrics prdc here", "isc": "is the command 'genlens is DIR' here", "isc-splits": "is 'genlens is --splits N' here",
	"prc-neighborhood": "is --nearest-k here", "samples-find-deep": "is --recursive here", "rng-seed": "is --seed here",
	"feature-extractor-weights-path": "is --weights here",
	"gpu":                            "has no counterpart: genlens runs on the CPU only (pure Go, no CUDA), and a second run reads the features from its cache",
	"cpu":                            "has no counterpart: genlens runs on the CPU only",
}

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
	if pytorchFIDFlags[name] && c.Flags().Lookup(name) == nil && c.Root().CommandPath() != c.CommandPath() {
		msg += " ('genlens fid' takes pytorch-fid's flags)"
	}
	if tf, ok := torchFidelityFlags[name]; ok {
		msg += fmt.Sprintf("; torch-fidelity's --%s %s (its 'fidelity --input1 GEN --input2 REF --fid --kid --prc' is 'genlens compare --fake GEN --real REF --metrics fid,kid,prdc --mode tf')", name, tf)
	}
	return errors.New(msg)
}
