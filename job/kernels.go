package job

import (
	"errors"
	"fmt"

	"gonum.org/v1/gonum/mat"

	"github.com/genlens/genlens/dataio"
	"github.com/genlens/genlens/fault"
	"github.com/genlens/genlens/metric/kernel"
)

// KernelBandwidth checks the kernel and gamma fields of a command that
// scores vectors (decompose, correlate, compare) and parses the bandwidth.
// gamma "" means defaultGamma; a gamma given for a kernel without a
// bandwidth (cosine, linear) is refused rather than silently ignored.
// command names the command in the message ("decompose").
func KernelBandwidth(command, name, gamma, defaultGamma string) (kernel.Bandwidth, error) {
	if gamma != "" && !hasBandwidth(name) {
		return kernel.Bandwidth{}, fault.Fieldf("gamma", "%s: {gamma} applies only to the rbf, laplacian and poly kernels, not {kernel} %s", command, name)
	}
	if err := kernel.ValidName(name); err != nil {
		return kernel.Bandwidth{}, fault.Fieldf("kernel", "%s", err)
	}
	if gamma == "" {
		gamma = defaultGamma
	}
	bw, err := kernel.ParseBandwidth(gamma)
	if err != nil {
		return kernel.Bandwidth{}, fault.Fieldf("gamma", "%s", err)
	}
	return bw, nil
}

func hasBandwidth(name string) bool {
	return name == "rbf" || name == "laplacian" || name == "poly"
}

// ResolveKernel is kernel.Resolve with the median rule's failure on
// constant data made a field error: the data are not wrong, but the rule
// cannot set gamma from them, and a numeric gamma fixes it. file names
// the input in the error when there are no rows to resolve the rule on.
func ResolveKernel(name string, bw kernel.Bandwidth, sets []*mat.Dense, file string) (kernel.Kernel, error) {
	k, err := kernel.Resolve(name, bw, sets)
	switch {
	case errors.Is(err, kernel.ErrZeroMedian):
		return nil, fault.Fieldf("gamma", "{gamma} median: the data are constant (the median pairwise distance of the sample rows is 0, most rows are identical); give a numeric {gamma}, e.g. {gamma} 1")
	case err != nil:
		return nil, &fault.InputError{File: file, Msg: fmt.Sprintf("no sample rows to set gamma %s from", bw), Err: err}
	}
	return k, nil
}

// sampleSets splits an (m, d) array into one sample set or an (I, m, d)
// array into I sets, one per input instance; the sets share a's data.
func SampleSets(a *dataio.Array) []*mat.Dense {
	if a.Rank() == 2 {
		return []*mat.Dense{mat.NewDense(a.Shape[0], a.Shape[1], a.Data)}
	}
	var out []*mat.Dense
	for c := 0; c < a.Shape[0]; c++ {
		s := a.Slice(c)
		out = append(out, mat.NewDense(s.Shape[0], s.Shape[1], s.Data))
	}
	return out
}
