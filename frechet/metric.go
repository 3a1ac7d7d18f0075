package frechet

// Metric names a two-sample score between real and generated feature
// rows, as `genlens compare --metrics` spells it.
type Metric string

// The metrics of a comparison. MMD and CMS are the kernel scores of
// package kscore, PRDC and Vendi those of packages manifold and diversity;
// they are listed here because what a comparison can compute depends on
// its inputs (see NeedsRows).
const (
	MetricFID Metric = "fid" // Fréchet distance (Distance)
	MetricKID Metric = "kid" // Kernel Inception Distance (KID)
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

// AllMetrics are the metrics `--metrics all` asks for: the Inception-era
// two-sample scores. prdc, vendi and cmmd are asked for by name: prdc
// costs three passes of n² d multiply-adds, and cmmd is meaningful on
// CLIP embeddings only.
var AllMetrics = []Metric{MetricFID, MetricKID, MetricMMD, MetricCMS}

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
