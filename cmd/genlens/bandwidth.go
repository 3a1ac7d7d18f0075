package main

import (
	"errors"

	"github.com/spf13/cobra"
	"gonum.org/v1/gonum/mat"

	"genlens/kernel"
)

type kernelFlags struct{ kernel, gamma string }

func (k *kernelFlags) register(cmd *cobra.Command, defaultKernel, defaultGamma string) {
	cmd.Flags().StringVar(&k.kernel, "kernel", defaultKernel, "kernel: rbf, laplacian, poly, cosine or linear")
	cmd.Flags().StringVar(&k.gamma, "gamma", defaultGamma, "bandwidth of rbf/laplacian/poly: dim (1/d), median, or a number")
}

// checkGamma refuses an explicit --gamma for a kernel without a bandwidth
// (cosine, linear), which would silently ignore it.
func (k *kernelFlags) checkGamma(cmd *cobra.Command) error {
	return gammaApplies(cmd, k.kernel)
}

func gammaApplies(cmd *cobra.Command, name string) error {
	switch name {
	case "rbf", "laplacian", "poly":
		return nil
	}
	if cmd.Flags().Changed("gamma") {
		return badUsage("--gamma applies only to the rbf, laplacian and poly kernels, not --kernel %s (see '%s --help')", name, cmd.CommandPath())
	}
	return nil
}

// build resolves the kernel; the median rule looks at up to 2000 rows
// evenly spaced over the sets.
func (k *kernelFlags) build(sets []*mat.Dense) (kernel.Kernel, error) {
	bw, err := kernel.ParseBandwidth(k.gamma)
	if err != nil {
		return nil, usageError{err}
	}
	var sample *mat.Dense
	if len(sets) > 0 {
		sample = sampleRows(sets, 2000)
	}
	return newKernel(k.kernel, bw, sample)
}

// newKernel is kernel.New with its errors made usage errors (exit 2): an
// unknown kernel name, or a bandwidth rule the data cannot resolve. The
// median rule on constant data (median pairwise distance 0) is the data's
// fault, not a failure of the program, and a numeric --gamma fixes it.
func newKernel(name string, bw kernel.Bandwidth, sample *mat.Dense) (kernel.Kernel, error) {
	kr, err := kernel.New(name, bw, sample)
	if errors.Is(err, kernel.ErrZeroMedian) {
		return nil, badUsage("--gamma median: the data are constant (the median pairwise distance of the sample rows is 0, most rows are identical); give a numeric --gamma, e.g. --gamma 1")
	}
	if err != nil {
		return nil, usageError{err}
	}
	return kr, nil
}

func sampleRows(sets []*mat.Dense, limit int) *mat.Dense {
	total := 0
	for _, s := range sets {
		r, _ := s.Dims()
		total += r
	}
	step := max(1, (total+limit-1)/limit)
	_, d := sets[0].Dims()
	var data []float64
	i := 0
	for _, s := range sets {
		r, _ := s.Dims()
		for j := 0; j < r; j++ {
			if i%step == 0 {
				data = append(data, s.RawRowView(j)...)
			}
			i++
		}
	}
	return mat.NewDense(len(data)/d, d, data)
}
