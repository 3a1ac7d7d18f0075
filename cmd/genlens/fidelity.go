package main

import (
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"gonum.org/v1/gonum/mat"

	"genlens/dataio"
	"genlens/frechet"
	"genlens/kscore"
)

func init() {
	extraCommands = append(extraCommands, newStatsCmd, newCompareCmd, newISCmd)
}

func newStatsCmd() *cobra.Command {
	var in, out, key string
	cmd := &cobra.Command{
		Use:   "stats --in FEATS.npy --out STATS.npz",
		Short: "Gaussian statistics (mu, sigma) of a feature set, as pytorch-fid writes them",
		Long: `stats computes the mean and the (n-1)-normalised covariance of feature rows
(Inception, CLIP, DINOv2, ... embeddings; n x d) and writes them as an .npz
with arrays mu (d) and sigma (d x d), the format of pytorch-fid's
--save-stats, for later 'genlens compare --real STATS.npz'.`,
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if in == "" || out == "" {
				return badUsage("stats: --in FEATS and --out STATS.npz are required")
			}
			if !strings.HasSuffix(strings.ToLower(out), ".npz") {
				return badUsage("stats: --out %s: want an .npz path", out)
			}
			if sameFileAs(out, in) != "" {
				return badUsage("stats: --out %s is the input; refusing to overwrite it", out)
			}
			x, err := readFeatures(in, rowsOpt{key: key, keyFlag: "--key"})
			if err != nil {
				return err
			}
			s := frechet.StatsOf(x, 1)
			if err := frechet.WriteStats(out, s); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %s: mu (%d), sigma (%d x %d) from %d rows\n", out, s.Dim(), s.Dim(), s.Dim(), s.N)
			return nil
		},
	}
	cmd.Flags().StringVar(&in, "in", "", "feature rows (.npy/.npz/.csv), n x d")
	cmd.Flags().StringVar(&key, "key", "", "array name inside an .npz input")
	cmd.Flags().StringVar(&out, "out", "", "statistics file to write (.npz)")
	return cmd
}

// checkProbs checks that the rows of p, read from file, are class
// distributions within tol, and rescales them to sum to 1 when tol is
// looser than the default (float32 softmax files).
func checkProbs(file string, p *mat.Dense, tol float64) error {
	if !(tol >= 0 && tol < 1) {
		return badUsage("--tolerance %v: want a value in [0, 1)", tol)
	}
	var err error
	if tol > frechet.ProbTolerance {
		err = frechet.NormalizeProbs(p, tol)
	} else {
		err = frechet.CheckProbs(p, tol)
	}
	var re *frechet.RowError
	if !errors.As(err, &re) {
		return err
	}
	msg := re.Msg
	if re.Col == 0 && tol <= frechet.ProbTolerance {
		// Only a sum close to 1 can be float32 rounding; one further off
		// is simply not a distribution.
		if off := math.Abs(rowSum(p, re.Row-1) - 1); off <= 1e-4 {
			msg += "; rows saved as float32 may need --tolerance 1e-4"
		} else if off <= 1e-3 {
			msg += "; rows saved with few digits may need --tolerance 1e-3"
		}
	}
	return &dataio.InputError{File: file, Line: re.Row, Field: colField(re.Col), Msg: msg}
}

// rowSum returns the sum of row i of p.
func rowSum(p *mat.Dense, i int) float64 {
	var s float64
	for _, v := range p.RawRowView(i) {
		s += v
	}
	return s
}

// rowsOpt says how to read a matrix of rows and how to speak of it.
type rowsOpt struct {
	key     string // .npz member ("" for the only one)
	keyFlag string // the flag that sets key, named when an .npz needs one
	probs   bool   // class-probability rows (n, classes), not feature rows (n, d)
	stats   bool   // the file may also be a statistics .npz (mu, sigma)
}

// what names the rows, e.g. "feature rows".
func (o rowsOpt) what() string {
	if o.probs {
		return "class-probability rows"
	}
	return "feature rows"
}

// readRows reads an n x d matrix of rows (n >= 1). An .npz with several
// arrays and no key is an error naming its members and o.keyFlag.
func readRows(path string, o rowsOpt) (*mat.Dense, error) {
	if o.key == "" && strings.HasSuffix(strings.ToLower(path), ".npz") {
		keys, err := dataio.NPZKeys(path)
		if err != nil {
			return nil, err
		}
		if len(keys) > 1 {
			what := ""
			if o.stats {
				what = " and no statistics (mu, sigma)"
			}
			return nil, &dataio.InputError{File: path, Msg: fmt.Sprintf("archive holds %d arrays (%s)%s; choose one with %s", len(keys), strings.Join(keys, ", "), what, o.keyFlag)}
		}
	}
	a, err := dataio.ReadArray(path, dataio.ReadOptions{Key: o.key})
	if err != nil {
		return nil, err
	}
	if a.Rank() == 4 && a.Shape[1] == 1 && a.Shape[2] == 1 {
		// pytorch-fid's pool3 output (n, d, 1, 1) or (n, 1, 1, d) squeezed.
		a = &dataio.Array{Shape: []int{a.Shape[0], a.Shape[3]}, Data: a.Data}
	} else if a.Rank() == 4 && a.Shape[2] == 1 && a.Shape[3] == 1 {
		a = &dataio.Array{Shape: []int{a.Shape[0], a.Shape[1]}, Data: a.Data}
	}
	if a.Rank() != 2 {
		shape := "(n, d)"
		if o.probs {
			shape = "(n, classes)"
		}
		return nil, &dataio.InputError{File: path, Key: o.key, Msg: fmt.Sprintf("want %s %s, got shape %v", o.what(), shape, a.Shape)}
	}
	return a.Matrix()
}

// readFeatures reads an n x d matrix of rows with at least 2 rows (a
// covariance needs 2).
func readFeatures(path string, o rowsOpt) (*mat.Dense, error) {
	x, err := readRows(path, o)
	if err != nil {
		return nil, err
	}
	if n := x.RawMatrix().Rows; n < 2 {
		return nil, &dataio.InputError{File: path, Key: o.key, Msg: fmt.Sprintf("%d row(s); need at least 2 %s", n, o.what())}
	}
	return x, nil
}

// isStatsFile reports whether path is an .npz of Gaussian statistics: it
// holds mu or sigma (frechet.ReadStats then says which one is missing)
// and no key chose an array of rows in it.
func isStatsFile(path, key string) bool {
	if key != "" || !strings.HasSuffix(strings.ToLower(path), ".npz") {
		return false
	}
	keys, err := dataio.NPZKeys(path)
	return err == nil && (slices.Contains(keys, "mu") || slices.Contains(keys, "sigma"))
}

type compareFlags struct {
	real, fake, metrics    string
	realKey, fakeKey       string
	kf                     kernelFlags
	kidSubsets, kidSubsize int
	seed                   uint64
	json                   bool
}

func newCompareCmd() *cobra.Command {
	var f compareFlags
	cmd := &cobra.Command{
		Use:   "compare --real R.(npy|npz) --fake F.npy [flags]",
		Short: "FID, KID, MMD² and CMS between real and generated feature sets",
		Long: `compare computes two-sample metrics between feature rows of real data and of a
generator (any embedder: Inception gives FID, DINOv2 FD-DINOv2, VGGish FAD, I3D FVD):

  fid   Frechet distance with (n-1) covariances, as pytorch-fid / clean-fid
  kid   unbiased MMD² with (x.y/d + 1)^3 over --kid-subsets subsets of size
        min(--kid-subset-size, n), mean and std (torch-fidelity's convention)
  mmd   unbiased MMD² with --kernel/--gamma
  cms   cosine similarity of the mean embeddings with --kernel/--gamma

--real may be a statistics file (.npz with mu and sigma, from 'genlens stats' or
pytorch-fid); then only fid can be computed. An .npz of several arrays without
mu and sigma needs --real-key (--fake-key) to name the array of rows; a key
also reads rows from an .npz that does hold mu and sigma.`,
		Example: `  genlens compare --real real_feats.npy --fake gen_feats.npy --json
  genlens compare --real cifar10_stats.npz --fake gen_feats.npy --metrics fid`,
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error { return runCompare(cmd, f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.real, "real", "", "real feature rows (.npy/.npz/.csv) or a statistics .npz (mu, sigma)")
	fl.StringVar(&f.fake, "fake", "", "generated feature rows (.npy/.npz/.csv)")
	fl.StringVar(&f.realKey, "real-key", "", "array of feature rows inside an .npz --real (rather than its mu, sigma)")
	fl.StringVar(&f.fakeKey, "fake-key", "", "array of feature rows inside an .npz --fake")
	fl.StringVar(&f.metrics, "metrics", "", "comma-separated subset of fid,kid,mmd,cms (default: all that the inputs allow)")
	f.kf.register(cmd, "rbf", "median")
	fl.IntVar(&f.kidSubsets, "kid-subsets", frechet.KIDSubsets, "KID: number of subsets")
	fl.IntVar(&f.kidSubsize, "kid-subset-size", frechet.KIDSubsetSize, "KID: subset size (capped at the smaller sample)")
	fl.Uint64Var(&f.seed, "seed", 1, "random seed for the KID subsets")
	fl.BoolVar(&f.json, "json", false, "print one JSON document")
	return cmd
}

type meanStd struct {
	Mean num `json:"mean"`
	Std  num `json:"std"`
}

// compareOutput is the JSON contract of `genlens compare`; metrics not
// computed are omitted, and n_real is null when --real is a statistics
// file that does not record its sample count (pytorch-fid's do not).
type compareOutput struct {
	FID    *num     `json:"fid,omitempty"`
	KID    *meanStd `json:"kid,omitempty"`
	MMD2   *num     `json:"mmd2,omitempty"`
	CMS    *num     `json:"cms,omitempty"`
	NReal  *int     `json:"n_real"`
	NFake  int      `json:"n_fake"`
	Dim    int      `json:"dim"`
	Kernel string   `json:"kernel,omitempty"`
}

func runCompare(cmd *cobra.Command, f compareFlags) error {
	if f.real == "" || f.fake == "" {
		return badUsage("compare: --real and --fake are required")
	}
	statsOnly := isStatsFile(f.real, f.realKey)
	want := map[string]bool{}
	if f.metrics == "" {
		want["fid"] = true
		if !statsOnly {
			want["kid"], want["mmd"], want["cms"] = true, true, true
		}
	}
	for _, m := range strings.Split(f.metrics, ",") {
		m = strings.TrimSpace(m)
		switch m {
		case "":
		case "fid", "kid", "mmd", "cms":
			want[m] = true
			if statsOnly && m != "fid" {
				return badUsage("compare: --metrics %s needs real feature rows, but %s is a statistics file (mu, sigma)", m, f.real)
			}
		default:
			return badUsage("compare: unknown metric %q (want fid, kid, mmd, cms)", m)
		}
	}
	if want["mmd"] || want["cms"] {
		if err := f.kf.checkGamma(cmd); err != nil {
			return err
		}
	} else if cmd.Flags().Changed("kernel") || cmd.Flags().Changed("gamma") {
		return badUsage("compare: --kernel and --gamma apply only to --metrics mmd and cms")
	}
	if want["kid"] && (f.kidSubsets < 1 || f.kidSubsize < 2) {
		return badUsage("compare: --kid-subsets must be >= 1 and --kid-subset-size >= 2")
	}
	fake, err := readFeatures(f.fake, rowsOpt{key: f.fakeKey, keyFlag: "--fake-key"})
	if err != nil {
		return err
	}
	var out compareOutput
	out.NFake, out.Dim = fake.RawMatrix().Rows, fake.RawMatrix().Cols
	var realStats frechet.Stats
	var real *mat.Dense
	if statsOnly {
		if realStats, err = frechet.ReadStats(f.real); err != nil {
			return err
		}
		if realStats.N > 0 {
			out.NReal = &realStats.N
		}
		if realStats.Dim() != out.Dim {
			return &dataio.InputError{File: f.fake, Msg: fmt.Sprintf("features have dimension %d, statistics %s have %d", out.Dim, f.real, realStats.Dim())}
		}
	} else {
		if real, err = readFeatures(f.real, rowsOpt{key: f.realKey, keyFlag: "--real-key", stats: true}); err != nil {
			return err
		}
		n := real.RawMatrix().Rows
		out.NReal = &n
		if c := real.RawMatrix().Cols; c != out.Dim {
			return &dataio.InputError{File: f.fake, Msg: fmt.Sprintf("features have dimension %d, %s has %d", out.Dim, f.real, c)}
		}
		realStats = frechet.StatsOf(real, 1)
	}
	if want["fid"] {
		d, err := frechet.Distance(realStats, frechet.StatsOf(fake, 1))
		if err != nil {
			if statsOnly {
				// The fake covariance comes from rows, so is positive
				// semidefinite: a covariance that is not is the file's.
				return statsFault(f.real, err)
			}
			return err
		}
		v := num(d)
		out.FID = &v
	}
	if want["kid"] {
		m, s, err := frechet.KID(real, fake, f.kidSubsets, f.kidSubsize, f.seed)
		if err != nil {
			return err
		}
		out.KID = &meanStd{num(m), num(s)}
	}
	if want["mmd"] || want["cms"] {
		k, err := f.kf.build([]*mat.Dense{real, fake})
		if err != nil {
			return err
		}
		out.Kernel = k.String()
		if want["mmd"] {
			v, err := kscore.MMD2(k, real, fake)
			if err != nil {
				return err
			}
			n := num(v)
			out.MMD2 = &n
		}
		if want["cms"] {
			v, err := kscore.CMS(k, real, fake)
			if err != nil {
				return err
			}
			n := num(v)
			out.CMS = &n
		}
	}
	if f.json {
		return writeJSON(cmd.OutOrStdout(), out)
	}
	printCompare(cmd.OutOrStdout(), &out)
	return nil
}

func printCompare(w io.Writer, o *compareOutput) {
	if o.NReal != nil {
		fmt.Fprintf(w, "real %d rows, fake %d rows, d = %d\n", *o.NReal, o.NFake, o.Dim)
	} else {
		fmt.Fprintf(w, "real statistics (sample count not recorded), fake %d rows, d = %d\n", o.NFake, o.Dim)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	if o.FID != nil {
		fmt.Fprintf(tw, "FID\t%s\t\n", fmtNum(float64(*o.FID)))
	}
	if o.KID != nil {
		fmt.Fprintf(tw, "KID\t%s ± %s\t\n", fmtNum(float64(o.KID.Mean)), fmtNum(float64(o.KID.Std)))
	}
	if o.MMD2 != nil {
		fmt.Fprintf(tw, "MMD²\t%s\t%s\n", fmtNum(float64(*o.MMD2)), o.Kernel)
	}
	if o.CMS != nil {
		fmt.Fprintf(tw, "CMS\t%s\t%s\n", fmtNum(float64(*o.CMS)), o.Kernel)
	}
	tw.Flush()
}

func newISCmd() *cobra.Command {
	var probs, key string
	var splits int
	var tol float64
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "is --probs P.npy [--splits 10] [--json]",
		Short: "Inception Score from class-probability rows",
		Long: `is computes the Inception Score exp(E KL(p(y|x) || p(y))) from class-probability
rows (n x classes, e.g. Inception's softmax outputs): --splits consecutive
splits, mean and (population) std over splits, as the original code and
torch-fidelity. Every row must be a distribution (non-negative, summing to 1
within --tolerance, default 1e-6). Softmax outputs saved as float32 are often
1e-7 to 1e-5 off: a looser --tolerance accepts such rows and rescales each to
sum to exactly 1 first.`,
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if probs == "" {
				return badUsage("is: --probs P.npy is required")
			}
			if splits < 1 {
				return badUsage("is: --splits %d: want >= 1", splits)
			}
			p, err := readRows(probs, rowsOpt{key: key, keyFlag: "--key", probs: true})
			if err != nil {
				return err
			}
			// frechet.InceptionScore needs a row per split, nothing
			// more: one row with --splits 1 has IS 1.
			if n := p.RawMatrix().Rows; n < splits {
				return &dataio.InputError{File: probs, Key: key, Msg: fmt.Sprintf("%d class-probability row(s) for --splits %d; need at least %d (or a smaller --splits)", n, splits, splits)}
			}
			if err := checkProbs(probs, p, tol); err != nil {
				return err
			}
			m, s, err := frechet.InceptionScore(p, splits)
			if err != nil {
				return err
			}
			out := struct {
				IS meanStd `json:"is"`
			}{meanStd{num(m), num(s)}}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), out)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "IS %s ± %s (%d splits)\n", fmtNum(m), fmtNum(s), splits)
			return nil
		},
	}
	cmd.Flags().StringVar(&probs, "probs", "", "class-probability rows (.npy/.npz/.csv), n x classes")
	cmd.Flags().StringVar(&key, "key", "", "array name inside an .npz input")
	cmd.Flags().IntVar(&splits, "splits", 10, "number of splits")
	cmd.Flags().Float64Var(&tol, "tolerance", frechet.ProbTolerance, "how far a row may sum from 1; above the default, rows are rescaled to sum to 1")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON document")
	return cmd
}
