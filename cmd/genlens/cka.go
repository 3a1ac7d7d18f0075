package main

import (
	"fmt"
	"math"

	"github.com/spf13/cobra"
	"gonum.org/v1/gonum/mat"

	"genlens/dataio"
	"genlens/disentangle"
	"genlens/kernel"
)

func init() { extraCommands = append(extraCommands, newCKACmd) }

type ckaFlags struct {
	x, y, kernel   string
	threshold      float64
	debiased, json bool
}

func newCKACmd() *cobra.Command {
	var f ckaFlags
	cmd := &cobra.Command{
		Use:   "cka --x X.npy --y Y.npy [--kernel linear|rbf] [--threshold 0.5] [--debiased] [--json]",
		Short: "Centred kernel alignment between two representations of the same examples",
		Long: `cka compares two representations of the same n examples (rows in the same
order; the numbers of columns may differ), e.g. two layers or two networks,
with centred kernel alignment as Kornblith et al. (2019) compute it: linear
kernel, or RBF exp(-d²/(2σ²)) with σ² = threshold² x the median squared
distance between the rows of each representation. CKA is HSIC(K, L) /
sqrt(HSIC(K, K) HSIC(L, L)) with the biased HSIC (seed 002, Eq. 11-13), or
with the unbiased HSIC of Song et al. (2012) under --debiased. The result is
null in JSON when undefined (a representation constant over the examples).`,
		Example: `  genlens cka --x layer3.npy --y layer4.npy
  genlens cka --x a.csv --y b.csv --kernel rbf --threshold 0.5 --json`,
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error { return runCKA(cmd, f) },
	}
	cmd.Flags().StringVar(&f.x, "x", "", "first representation (.npy/.npz/.csv), n x d1")
	cmd.Flags().StringVar(&f.y, "y", "", "second representation, n x d2")
	cmd.Flags().StringVar(&f.kernel, "kernel", "linear", "linear or rbf")
	cmd.Flags().Float64Var(&f.threshold, "threshold", 0.5, "rbf: sigma = threshold x sqrt(median squared distance)")
	cmd.Flags().BoolVar(&f.debiased, "debiased", false, "use the unbiased HSIC estimator (needs n >= 4)")
	cmd.Flags().BoolVar(&f.json, "json", false, "print one JSON document")
	return cmd
}

// ckaOutput is the JSON contract of `genlens cka`.
type ckaOutput struct {
	CKA num `json:"cka"`
}

func runCKA(cmd *cobra.Command, f ckaFlags) error {
	if f.x == "" || f.y == "" {
		return badUsage("cka: --x and --y are required")
	}
	if f.kernel != "linear" && f.kernel != "rbf" {
		return badUsage("cka: --kernel %q: want linear or rbf", f.kernel)
	}
	if f.kernel == "rbf" && (!(f.threshold > 0) || math.IsInf(f.threshold, 0)) {
		return badUsage("cka: --threshold %g: want a positive number", f.threshold)
	}
	x, err := dataio.ReadMatrix(f.x, dataio.ReadOptions{})
	if err != nil {
		return err
	}
	y, err := dataio.ReadMatrix(f.y, dataio.ReadOptions{})
	if err != nil {
		return err
	}
	nx, _ := x.Dims()
	ny, _ := y.Dims()
	if nx != ny {
		return &dataio.InputError{File: f.y, Msg: fmt.Sprintf("%d rows, but %s has %d (CKA compares representations of the same examples)", ny, f.x, nx)}
	}
	if f.debiased && nx < 4 {
		return &dataio.InputError{File: f.x, Msg: fmt.Sprintf("%d rows: --debiased needs at least 4 examples", nx)}
	}
	gram := func(path string, m *mat.Dense) (*mat.SymDense, error) {
		if f.kernel == "linear" {
			return kernel.Linear{}.Gram(m), nil
		}
		k, err := disentangle.KornblithRBF(m, f.threshold)
		if err == kernel.ErrZeroMedian {
			return nil, &dataio.InputError{File: path, Msg: "median squared distance between rows is 0 (most rows identical): the rbf bandwidth is undefined"}
		}
		if err != nil {
			return nil, err
		}
		return k.Gram(m), nil
	}
	kx, err := gram(f.x, x)
	if err != nil {
		return err
	}
	ky, err := gram(f.y, y)
	if err != nil {
		return err
	}
	var v float64
	if f.debiased {
		v, err = disentangle.CKAUnbiased(kx, ky)
	} else {
		v, err = disentangle.CKA(kx, ky)
	}
	if err != nil {
		return err
	}
	if f.json {
		return writeJSON(cmd.OutOrStdout(), ckaOutput{CKA: num(v)})
	}
	what := "CKA"
	if f.debiased {
		what = "debiased CKA"
	}
	k := "linear kernel"
	if f.kernel == "rbf" {
		k = fmt.Sprintf("rbf kernel, threshold %g", f.threshold)
	}
	fmt.Fprintf(cmd.OutOrStdout(), "%s (%s, %d examples): %s\n", what, k, nx, fmtNum(v))
	return nil
}
