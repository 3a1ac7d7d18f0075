package frechet

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"slices"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/genlens/genlens/dataio"
	"github.com/genlens/genlens/fault"
)

// symTolerance is how far apart Σ[i][j] and Σ[j][i] of a stats file may
// be, relative to the largest variance: float32 files and BLAS products
// that do not exploit symmetry differ in the last bits.
const symTolerance = 1e-4

// ReadStats reads Gaussian statistics from an .npz file with arrays mu
// (shape (d,)) and sigma (shape (d, d)), as pytorch-fid's --save-stats and
// np.savez(path, mu=mu, sigma=sigma) write them, in float32 or float64.
// An optional n (the sample count, written by WriteStats) is read when
// present; N is 0 otherwise.
//
// sigma is symmetrised as (Σ + Σᵀ)/2, after checking that it is
// symmetric within 10⁻⁴ of its largest variance, and must pass the cheap
// necessary conditions for a covariance: non-negative variances and
// |Σᵢⱼ| <= √(Σᵢᵢ Σⱼⱼ) (within PSDTolerance). Every problem with the file
// (missing key, wrong shape, non-finite value, asymmetric sigma, an entry
// no covariance can have) is a *fault.InputError naming the file and key;
// for the last, Line is i+1 and Field "sigma[i][j]" for the first such
// entry (0-based i < j), and the error wraps ErrNotPSD and a *PairError.
// Indefiniteness these O(d²) checks cannot see is left to Distance and
// NewReference, which factorise sigma anyway.
func ReadStats(path string) (Stats, error) { return ReadStatsFS(dataio.HostFS, path) }

// ReadStatsFS is ReadStats reading path from fsys.
func ReadStatsFS(fsys fs.FS, path string) (Stats, error) {
	keys, err := dataio.NPZKeysFS(fsys, path)
	if err != nil {
		return Stats{}, err
	}
	for _, k := range []string{"mu", "sigma"} {
		if !slices.Contains(keys, k) {
			return Stats{}, &fault.InputError{File: path, Msg: fmt.Sprintf("missing array %q: a stats file needs mu and sigma (keys: %s)", k, strings.Join(keys, ", "))}
		}
	}
	mu, err := dataio.ReadArrayFS(fsys, path, dataio.ReadOptions{Key: "mu"})
	if err != nil {
		return Stats{}, err
	}
	if mu.Rank() != 1 {
		return Stats{}, &fault.InputError{File: path, Key: "mu", Msg: fmt.Sprintf("want a 1-D mean vector, got shape %s", shape(mu.Shape))}
	}
	d := mu.Shape[0]
	sg, err := dataio.ReadArrayFS(fsys, path, dataio.ReadOptions{Key: "sigma"})
	if err != nil {
		return Stats{}, err
	}
	if sg.Rank() != 2 || sg.Shape[0] != d || sg.Shape[1] != d {
		return Stats{}, &fault.InputError{File: path, Key: "sigma", Msg: fmt.Sprintf("want a %d×%d covariance matrix (len(mu) = %d), got shape %s", d, d, d, shape(sg.Shape))}
	}
	var scale float64
	for i := 0; i < d; i++ {
		scale = max(scale, math.Abs(sg.Data[i*d+i]))
	}
	sigma := mat.NewSymDense(d, nil)
	for i := 0; i < d; i++ {
		for j := i; j < d; j++ {
			a, b := sg.Data[i*d+j], sg.Data[j*d+i]
			if math.Abs(a-b) > symTolerance*scale {
				return Stats{}, &fault.InputError{File: path, Key: "sigma", Line: i + 1, Field: fmt.Sprintf("sigma[%d][%d]", i, j),
					Msg: fmt.Sprintf("covariance is not symmetric: %g vs sigma[%d][%d] = %g", a, j, i, b)}
			}
			sigma.SetSym(i, j, (a+b)/2)
		}
	}
	s := Stats{Mu: mu.Data, Sigma: sigma}
	if slices.Contains(keys, "n") {
		na, err := dataio.ReadArrayFS(fsys, path, dataio.ReadOptions{Key: "n"})
		if err != nil {
			return Stats{}, err
		}
		if na.Size() != 1 || na.Data[0] < 0 || na.Data[0] != math.Trunc(na.Data[0]) {
			return Stats{}, &fault.InputError{File: path, Key: "n", Msg: "want one non-negative integer sample count"}
		}
		s.N = int(na.Data[0])
	}
	if err := s.check("statistics"); err != nil {
		var pe *PairError
		if errors.As(err, &pe) {
			return Stats{}, &fault.InputError{File: path, Key: "sigma", Line: pe.I + 1, Field: fmt.Sprintf("sigma[%d][%d]", pe.I, pe.J),
				Msg: fmt.Sprintf("%v: |%.6g| exceeds √(sigma[%d][%d]·sigma[%d][%d]) = %.6g", ErrNotPSD, pe.Value, pe.I, pe.I, pe.J, pe.J, pe.Bound), Err: err}
		}
		msg := err.Error()
		if se := (*StatsError)(nil); errors.As(err, &se) {
			msg = se.Msg // the file names the statistics
		}
		return Stats{}, &fault.InputError{File: path, Msg: msg, Err: err}
	}
	return s, nil
}

// IsStatsFile reports whether path in fsys is an .npz of Gaussian
// statistics: one that holds mu or sigma (ReadStatsFS then says which one
// is missing). Anything else (an .npy, a .csv, an .npz of feature rows, a
// file that cannot be opened) is not, and is left to the reader of rows
// to report.
func IsStatsFile(fsys fs.FS, path string) bool {
	if !strings.HasSuffix(strings.ToLower(path), ".npz") {
		return false
	}
	keys, err := dataio.NPZKeysFS(fsys, path)
	return err == nil && (slices.Contains(keys, "mu") || slices.Contains(keys, "sigma"))
}

// WriteStats writes s to the file path as EncodeStats does.
func WriteStats(path string, s Stats) error {
	if err := s.check("statistics"); err != nil {
		return fmt.Errorf("%w (writing %s)", err, path)
	}
	return dataio.WriteNPZ(path, statsArrays(s), false)
}

// EncodeStats writes s to w as an uncompressed .npz with float64 arrays
// mu (d,) and sigma (d, d), which pytorch-fid, clean-fid and numpy.load
// read, plus n (shape (1,)) when s.N > 0, which they ignore.
func EncodeStats(w io.Writer, s Stats) error {
	if err := s.check("statistics"); err != nil {
		return err
	}
	return dataio.EncodeNPZ(w, statsArrays(s), false)
}

// EncodeStatsWith writes s as EncodeStats does, plus the extra arrays
// (which readers of mu and sigma ignore) under their keys.
func EncodeStatsWith(w io.Writer, s Stats, extra map[string]*dataio.Array) error {
	if err := s.check("statistics"); err != nil {
		return err
	}
	arrays := statsArrays(s)
	for k, v := range extra {
		if _, ok := arrays[k]; ok {
			return fmt.Errorf("frechet: extra array %q would replace the statistics' own", k)
		}
		arrays[k] = v
	}
	return dataio.EncodeNPZ(w, arrays, false)
}

// statsArrays returns the arrays of the .npz of s.
func statsArrays(s Stats) map[string]*dataio.Array {
	d := s.Dim()
	full := symToDense(s.Sigma)
	arrays := map[string]*dataio.Array{
		"mu":    {Shape: []int{d}, Data: slices.Clone(s.Mu)},
		"sigma": {Shape: []int{d, d}, Data: full.RawMatrix().Data},
	}
	if s.N > 0 {
		arrays["n"] = &dataio.Array{Shape: []int{1}, Data: []float64{float64(s.N)}}
	}
	return arrays
}

// shape formats an array shape as numpy does, e.g. (3, 4) or (5,).
func shape(s []int) string {
	parts := make([]string, len(s))
	for i, v := range s {
		parts[i] = fmt.Sprint(v)
	}
	if len(s) == 1 {
		return "(" + parts[0] + ",)"
	}
	return "(" + strings.Join(parts, ", ") + ")"
}
