package main

import (
	"github.com/spf13/cobra"
)

// kernelFlags binds --kernel and --gamma of the commands that score
// vectors with a kernel of kernel.Names.
type kernelFlags struct{ kernel, gamma string }

func (k *kernelFlags) register(cmd *cobra.Command, defaultKernel, defaultGamma string) {
	cmd.Flags().StringVar(&k.kernel, "kernel", defaultKernel, "kernel: rbf, laplacian, poly, cosine or linear")
	cmd.Flags().StringVar(&k.gamma, "gamma", defaultGamma, "bandwidth of rbf/laplacian/poly: dim (1/d), median, or a number")
	markGivenOnly(cmd, "gamma")
}

// request returns the kernel and gamma fields of a job request: gamma only
// when given, so that the job refuses it for a kernel without a bandwidth
// (cosine, linear) instead of silently ignoring it.
func (k *kernelFlags) request(cmd *cobra.Command) (name, gamma string) {
	ifGiven(cmd, "gamma", &gamma, k.gamma)
	return k.kernel, gamma
}

// ifGiven sets *field to v when the flag name was given on cmd's command
// line: for flags that reach a request only when given, so that the job
// refuses one that does not apply instead of silently ignoring it.
func ifGiven[T any](cmd *cobra.Command, name string, field *T, v T) {
	if cmd.Flags().Changed(name) {
		*field = v
	}
}

// givenOnly annotates a flag that reaches the request only when given
// (see ifGiven): its default is the job's reading of the unset field.
const givenOnly = "genlens:given-only"

// markGivenOnly marks the flags names of cmd as givenOnly.
func markGivenOnly(cmd *cobra.Command, names ...string) {
	for _, n := range names {
		if err := cmd.Flags().SetAnnotation(n, givenOnly, []string{"true"}); err != nil {
			panic(err)
		}
	}
}
