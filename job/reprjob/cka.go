package reprjob

import (
	"context"
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/genlens/genlens/dataio"
	"github.com/genlens/genlens/fault"
	"github.com/genlens/genlens/internal/fields"
	"github.com/genlens/genlens/internal/format/jsonnum"
	"github.com/genlens/genlens/internal/tensor/membudget"
	"github.com/genlens/genlens/job"
	"github.com/genlens/genlens/metric/disentangle"
	"github.com/genlens/genlens/metric/kernel"
)

// CKARequest is a request of `genlens cka`: centred kernel alignment
// between two representations of the same examples (Kornblith et al.,
// "Similarity of Neural Network Representations Revisited", ICML 2019).
// Start from NewCKARequest, which holds the command line's defaults.
type CKARequest struct {
	X         string  `json:"x" help:"first representation (.npy/.npz/.csv), n x d1"`
	Y         string  `json:"y" help:"second representation, n x d2"`
	Kernel    string  `json:"kernel" help:"linear or rbf"`                                             // linear or rbf
	Threshold float64 `json:"threshold" help:"rbf: sigma = threshold x sqrt(median squared distance)"` // rbf: sigma = threshold x sqrt(median squared distance)
	Debiased  bool    `json:"debiased" help:"use the unbiased HSIC estimator (needs n >= 4)"`

	job.CSVOptions // sep: how the fields of CSV inputs are separated
}

// NewCKARequest returns a request with the command line's defaults.
func NewCKARequest() CKARequest { return CKARequest{Kernel: "linear", Threshold: 0.5} }

// Validate checks the fields that need no input file.
func (r *CKARequest) Validate() (verr error) {
	defer func() { verr = job.WithDefault(verr, r, NewCKARequest()) }()
	if err := r.CSVOptions.ValidateSep(); err != nil {
		return err
	}
	switch {
	case r.X == "" || r.Y == "":
		return fault.Fieldf("x", "cka: {x} and {y} are required")
	case r.Kernel != "linear" && r.Kernel != "rbf":
		return fault.Fieldf("kernel", "cka: {kernel} %q: want linear or rbf", r.Kernel)
	case r.Kernel == "rbf" && (!(r.Threshold > 0) || math.IsInf(r.Threshold, 0)):
		return fault.Fieldf("threshold", "cka: {threshold} %g: want a positive number", r.Threshold)
	}
	return nil
}

// CKAResult is the result of `genlens cka`; it marshals to the command's
// --json document.
type CKAResult struct {
	CKA jsonnum.Num `json:"cka"` // null when undefined (a representation constant over the examples)
	N   int         `json:"-"`   // examples
}

// CKA runs `genlens cka`, reading both representations through env.FS.
func CKA(ctx context.Context, env job.Env, req CKARequest) (*CKAResult, error) {
	if err := req.Validate(); err != nil {
		return nil, err
	}
	fsys := env.InputFS()
	x, err := dataio.ReadMatrixFS(fsys, req.X, dataio.ReadOptions{Sep: req.Separator()})
	if err != nil {
		return nil, err
	}
	y, err := dataio.ReadMatrixFS(fsys, req.Y, dataio.ReadOptions{Sep: req.Separator()})
	if err != nil {
		return nil, err
	}
	nx, _ := x.Dims()
	ny, _ := y.Dims()
	if nx != ny {
		return nil, &fault.InputError{File: req.Y, Msg: fmt.Sprintf("%d rows, but %s has %d (CKA compares representations of the same examples)", ny, req.X, nx)}
	}
	// Two n × n Gram matrices and their centred copies are held at once.
	if err := membudget.Check("CKA's Gram matrices of the examples", 4, nx, nx); err != nil {
		return nil, fields.Errorf("%s: %w", req.X, err)
	}
	if req.Debiased && nx < 4 {
		return nil, &fault.InputError{File: req.X, Msg: fmt.Sprintf("%d rows: {debiased} needs at least 4 examples", nx)}
	}
	gram := func(path string, m *mat.Dense) (*mat.SymDense, error) {
		if req.Kernel == "linear" {
			return kernel.Linear{}.GramContext(ctx, m)
		}
		k, err := disentangle.KornblithRBFContext(ctx, m, req.Threshold)
		if errors.Is(err, kernel.ErrZeroMedian) {
			return nil, &fault.InputError{File: path, Msg: "median squared distance between rows is 0 (most rows identical): the rbf bandwidth is undefined"}
		}
		if err != nil {
			return nil, err
		}
		return k.GramContext(ctx, m)
	}
	kx, err := gram(req.X, x)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	ky, err := gram(req.Y, y)
	if err != nil {
		return nil, err
	}
	// The Gram matrices stop between blocks of rows once ctx is done
	// (linalg.GramContext); the centring is looked at before too.
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var v float64
	if req.Debiased {
		v, err = disentangle.CKAUnbiased(kx, ky)
	} else {
		v, err = disentangle.CKA(kx, ky)
	}
	if err != nil {
		return nil, err
	}
	return &CKAResult{CKA: jsonnum.Num(v), N: nx}, nil
}
