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
}

// request returns the kernel and gamma fields of a job request: gamma only
// when given, so that the job refuses it for a kernel without a bandwidth
// (cosine, linear) instead of silently ignoring it.
func (k *kernelFlags) request(cmd *cobra.Command) (name, gamma string) {
	if cmd.Flags().Changed("gamma") {
		return k.kernel, k.gamma
	}
	return k.kernel, ""
}
