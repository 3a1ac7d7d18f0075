package imagejob

// Metric names a two-sample score between real and generated feature
// rows, as the metrics field of CompareRequest spells it.
type Metric string

// The metrics of a comparison: FID and KID of package frechet, MMD and
// CMS, the kernel scores of package kscore, PRDC and Vendi those of
// packages manifold and diversity. What a comparison can compute depends
// on its inputs (see NeedsRows).
const (
	MetricFID Metric = "fid" // Fréchet distance (frechet.Distance)
	MetricKID Metric = "kid" // Kernel Inception Distance (frechet.KID)
	MetricMMD Metric = "mmd" // unbiased MMD² with a chosen kernel
	MetricCMS Metric = "cms" // cosine similarity of mean embeddings
	// MetricPRDC is precision, recall, density and coverage (package
	// manifold).
	MetricPRDC Metric = "prdc"
	// MetricVendi is the Vendi score of each side (package diversity).
	MetricVendi Metric = "vendi"
	// MetricCMMD is CLIP-MMD (CMMD).
	MetricCMMD Metric = "cmmd"
)

// Metrics lists every metric, in the order results report them.
var Metrics = []Metric{MetricFID, MetricKID, MetricMMD, MetricCMS, MetricPRDC, MetricVendi, MetricCMMD}

// AllMetrics are the metrics that "all" asks for: every two-sample
// score but cmmd, which is meaningful on CLIP embeddings only and is asked
// for by name. The Inception score is not among them: it scores one set
// from the classifier's logits, not two sets of features ('genlens is').
// prdc and vendi cost n² d multiply-adds a pass (prdc three passes), as
// mmd does; prdc_max_rows bounds prdc's.
var AllMetrics = []Metric{MetricFID, MetricKID, MetricMMD, MetricCMS, MetricPRDC, MetricVendi}

// NeedsRows reports whether m needs the feature rows of both sides. Only
// the Fréchet distance is a function of the Gaussian statistics (μ, Σ)
// alone, so a side given as a statistics file (pytorch-fid's --save-stats)
// allows FID and nothing else.
func (m Metric) NeedsRows() bool { return m != MetricFID }

// Valid reports whether m is one of Metrics.
func (m Metric) Valid() bool {
	for _, v := range Metrics {
		if m == v {
			return true
		}
	}
	return false
}
