package imagejob

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/genlens/genlens/job"
	"github.com/genlens/genlens/network/inception"
)

var num = job.FormatNum

// WriteText describes in one line how a job's folders became features,
// and in one more when the weights are not the published ones; nothing
// for nil (no folder).
func (im *ImagesInfo) WriteText(w io.Writer) {
	if im == nil {
		return
	}
	how := "mode " + im.Mode
	if im.Preset != "" {
		how = "preset " + im.Preset
	}
	fmt.Fprintf(w, "images: %d (%d from the feature cache, %d through the network), %s, %s, %.1f s (network %.1f s, waiting for decoding %.1f s)\n",
		im.Images, im.Cached, im.Computed, im.Embedder, how, float64(im.Seconds), float64(im.NetworkSeconds), float64(im.WaitSeconds))
	im.Weights.WriteText(w)
}

// WriteText says, in one line, that Inception weights are not the
// published FID file; nothing for the published file or a ViT's weights.
func (wi WeightsInfo) WriteText(w io.Writer) {
	if !wi.Unofficial() {
		return
	}
	sum := wi.SHA256
	if len(sum) > 12 {
		sum = sum[:12] + "…"
	}
	fmt.Fprintf(w, "weights: %s (sha256 %s) are not the published FID Inception weights (%s): not comparable with published FIDs\n", wi.Path, sum, inception.WeightsFile)
}

func compareText(w io.Writer, f *CompareRequest, o *CompareResult) {
	side := func(name string, folder bool, n *int) string {
		switch {
		case n == nil:
			return name + " statistics (sample count not recorded)"
		case folder:
			return fmt.Sprintf("%s %d images", name, *n)
		}
		return fmt.Sprintf("%s %d rows", name, *n)
	}
	fmt.Fprintf(w, "%s, %s, d = %d\n", side("real", o.realDir, o.NReal), side("fake", o.fakeDir, o.NFake), o.Dim)
	defer o.Images.WriteText(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	if o.FID != nil {
		fmt.Fprintf(tw, "FID\t%s\t\n", num(float64(*o.FID)))
	}
	if o.KID != nil {
		fmt.Fprintf(tw, "KID\t%s ± %s\t\n", num(float64(o.KID.Mean)), num(float64(o.KID.Std)))
	}
	if o.MMD2 != nil {
		fmt.Fprintf(tw, "MMD²\t%s\t%s\n", num(float64(*o.MMD2)), o.Kernel)
	}
	if o.CMS != nil {
		fmt.Fprintf(tw, "CMS\t%s\t%s\n", num(float64(*o.CMS)), o.Kernel)
	}
	if o.Precision != nil {
		k := fmt.Sprintf("k = %d", f.NearestK)
		if f.PRDCMaxRows > 0 {
			k += fmt.Sprintf(", at most %d rows a side", f.PRDCMaxRows)
		}
		fmt.Fprintf(tw, "precision\t%s\t%s\n", num(float64(*o.Precision)), k)
		fmt.Fprintf(tw, "recall\t%s\t\n", num(float64(*o.Recall)))
		fmt.Fprintf(tw, "density\t%s\t\n", num(float64(*o.Density)))
		fmt.Fprintf(tw, "coverage\t%s\t\n", num(float64(*o.Coverage)))
	}
	if o.Vendi != nil {
		fmt.Fprintf(tw, "Vendi\t%s\tfake (real %s)\n", num(float64(*o.Vendi)), num(float64(*o.VendiReal)))
	}
	if o.CMMD != nil {
		fmt.Fprintf(tw, "CMMD\t%s\t\n", num(float64(*o.CMMD)))
	}
	tw.Flush()
}

func isText(w io.Writer, f *ISRequest, res *ISResult) {
	fmt.Fprintf(w, "IS %s ± %s (%d splits)\n", num(float64(res.IS.Mean)), num(float64(res.IS.Std)), f.Splits)
	res.Images.WriteText(w)
}

func selectText(w io.Writer, f *SelectRequest, o *SelectResult) {
	pools := f.Pools
	// Generators count from 1 here, as people count pools; the JSON's
	// "best" is the 0-based index.
	fmt.Fprintf(w, "%d generators, %s; best on its whole pool: generator %d of %d (%s, %s = %s)\n", len(pools), strings.ToUpper(o.Score), o.Best+1, len(pools), pools[o.Best], o.Score, num(float64(o.Scores[o.Best])))
	fmt.Fprintf(w, "%d trials x %d steps x batch %d", o.Trials, o.Steps, o.Batch)
	if o.FIDBonus != "" {
		fmt.Fprintf(w, "; fid-ucb's bonus: %s", o.FIDBonus)
	}
	fmt.Fprint(w, "\n\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "algorithm\tfinal regret\toptimal-pick ratio\tpicks of the best\t")
	for _, name := range o.Order {
		a := o.Algorithms[name]
		fmt.Fprintf(tw, "%s\t%s ± %s\t%.3f ± %.3f\t%.0f of %d\t\n", name, num(float64(a.RegretFinal.Mean)), num(float64(a.RegretFinal.Std)),
			float64(a.OptimalPickRatioFinal.Mean), float64(a.OptimalPickRatioFinal.Std), a.Picks[o.Best], o.Steps)
	}
	tw.Flush()
	o.Images.WriteText(w)
}

// statsText says what the file at res.Path holds (set by the transport
// that wrote it).
func statsText(w io.Writer, _ *StatsRequest, res *StatsResult) {
	what := "rows" // what the statistics are of
	if res.Images != nil {
		what = "images"
	}
	if res.Part != nil {
		fmt.Fprintf(w, "wrote %s: part %d of %d shards (0-based): n, mean (%d), scatter (%d x %d) of %d %s\n", res.Path, res.Part.Shard, res.Part.Shards, res.Dim, res.Dim, res.Dim, res.N, what)
	} else {
		fmt.Fprintf(w, "wrote %s: mu (%d), sigma (%d x %d) from %d %s\n", res.Path, res.Dim, res.Dim, res.Dim, res.N, what)
	}
	res.Images.WriteText(w)
}

func statsMergeText(w io.Writer, _ *StatsMergeRequest, res *StatsMergeResult) {
	fmt.Fprintf(w, "wrote %s: mu (%d), sigma (%d x %d) from %d rows in %d parts of %d shards", res.Path, res.Dim, res.Dim, res.Dim, res.N, res.Parts, res.Shards)
	if len(res.Missing) > 0 {
		fmt.Fprintf(w, " (missing %s)", strings.Trim(fmt.Sprint(res.Missing), "[]"))
	}
	fmt.Fprintf(w, "; %s, mode %s, dims %s\n", res.Embedder, orDash(res.Mode), orDash(res.Dims))
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func featuresText(w io.Writer, _ *FeaturesRequest, res *FeaturesResult) {
	how := "mode " + res.Mode
	if res.Preset != "" {
		how = res.Embedder + ", preset " + res.Preset
	}
	// The rate of the images the network saw: cached features cost a
	// read, and a rate over them says nothing of the network.
	speed := "every one from the feature cache"
	if net := res.Images - res.Cached; net > 0 {
		speed = fmt.Sprintf("%d from the feature cache, %d through the network at %s images/s on %s", res.Cached, net, job.FormatRate(float64(net)/max(float64(res.Seconds), 1e-9)), res.Backend)
	}
	fmt.Fprintf(w, "%d images -> %s (%d x %d float32, %s, %s); %s\n",
		res.Images, res.Path, res.Images, res.Dims, res.Output, how, speed)
	res.Weights.WriteText(w)
}
