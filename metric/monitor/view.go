package monitor

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/genlens/genlens/internal/format/jsonnum"
)

// ChunkView is the JSON of one monitored chunk (a Result), the one view
// of a chunk: `genlens mse estimate --json` lists its chunks as
// ChunkViews, and the service's monitors theirs (GET
// /api/v1/monitors/{id}/chunks, and a monitor's summary), so that a key
// means the same in both and neither lacks one the other has. Start and
// End are 0-based row positions in chunk order, End exclusive.
type ChunkView struct {
	Index int `json:"index"`
	Start int `json:"start"`
	End   int `json:"end"`
	// Rows is the chunk's row count; N is the same count, under the name
	// the service's chunks had first (both are kept for their clients).
	Rows   int    `json:"rows"`
	N      int    `json:"n"`
	Period string `json:"period,omitempty"`
	From   string `json:"from,omitempty"` // RFC 3339, the first timestamp of a time-based chunk
	To     string `json:"to,omitempty"`   // and the last
	// EstimatedMSE is the mean of the chunk's per-row estimates and
	// SamplingError its standard error. Lower and Upper are the chunk's
	// interval, the one that decides Alert (Result.EstimateLower and
	// EstimateUpper, the same numbers as EstimateLower and EstimateUpper
	// below): what the table of mse estimate, its chart and the
	// service's dashboard show. SELower and SEUpper are the sampling
	// band EstimatedMSE ∓ width·SamplingError (Result.Lower and Upper),
	// which holds the estimate's sampling noise only and decides nothing.
	EstimatedMSE  jsonnum.Num `json:"estimated_mse"`
	SamplingError jsonnum.Num `json:"sampling_error"`
	Lower         jsonnum.Num `json:"lower"`
	Upper         jsonnum.Num `json:"upper"`
	SELower       jsonnum.Num `json:"se_lower"`
	SEUpper       jsonnum.Num `json:"se_upper"`
	Alert         bool        `json:"alert"`
	// RealizedMSE is the mean realised loss of the chunk's labelled rows
	// (null while none is), Labelled their count: absent in mse estimate
	// without a target, always present in the service, whose rows may be
	// labelled later.
	RealizedMSE jsonnum.Num `json:"realized_mse"`
	Labelled    *int        `json:"labelled,omitempty"`
	// Complete says whether a monitor's chunk is full (its chunk_size
	// rows, or its period over by the server's clock) rather than still
	// filling; absent in mse estimate, whose data file holds every row
	// its chunks will have.
	Complete *bool `json:"complete,omitempty"`
	// EstimateLower and EstimateUpper equal Lower and Upper (the names
	// the interval had first, kept for their clients): they bound the
	// chunk's MSE (not only the estimate's sampling noise), calibrated on
	// the reference's held-out estimates when IntervalCalibrated, else
	// the sampling band.
	EstimateLower      jsonnum.Num `json:"estimate_lower"`
	EstimateUpper      jsonnum.Num `json:"estimate_upper"`
	IntervalCalibrated bool        `json:"interval_calibrated"`
	// The chunk's extrapolation and drift; absent for a model file
	// without a drift model.
	*DriftView
}

// NewChunkView returns the JSON of the chunk r, whose drift (if any) is
// under the drift model m with the reconstruction error's thresholds
// th. Labelled and Complete are left for the caller, which knows whether
// they apply.
func NewChunkView(r *Result, m *DriftModel, th Thresholds) ChunkView {
	v := ChunkView{Index: r.Index, Start: r.Start, End: r.End, Rows: r.Rows(), N: r.Rows(), Period: r.Period,
		EstimatedMSE: jsonnum.Num(r.Estimate), SamplingError: jsonnum.Num(r.SamplingError), Lower: jsonnum.Num(r.EstimateLower), Upper: jsonnum.Num(r.EstimateUpper),
		SELower: jsonnum.Num(r.Lower), SEUpper: jsonnum.Num(r.Upper), Alert: r.Alert, RealizedMSE: jsonnum.Num(r.Realized),
		EstimateLower: jsonnum.Num(r.EstimateLower), EstimateUpper: jsonnum.Num(r.EstimateUpper), IntervalCalibrated: r.IntervalCalibrated,
		DriftView: NewDriftView(r.Drift, m, th)}
	if !r.From.IsZero() {
		v.From = r.From.Format(time.RFC3339)
	}
	if !r.To.IsZero() {
		v.To = r.To.Format(time.RFC3339)
	}
	return v
}

// DriftView is the JSON of a chunk's extrapolation and drift (ChunkDrift
// with the names of its DriftModel's features), part of ChunkView.
type DriftView struct {
	// OutOfReference is the fraction of the chunk's rows with at least
	// one feature outside its reference range, and Extrapolating whether
	// it exceeds max_out_of_reference; Outside counts, per feature, the
	// rows outside its range (features with none left out), which says
	// why.
	OutOfReference jsonnum.Num    `json:"out_of_reference"`
	Extrapolating  bool           `json:"extrapolating"`
	Outside        map[string]int `json:"outside,omitempty"`
	// OutOfReferenceLimit is the fraction of rows outside the ranges
	// above which the chunk is extrapolating (ChunkDrift.RangeLimit).
	OutOfReferenceLimit jsonnum.Num `json:"out_of_reference_limit"`
	// ReconstructionError is the mean data reconstruction error of the
	// chunk's rows (NannyML's multivariate drift, each row's capped at
	// the reference's ReconstructionCap quantile), DriftLower and
	// DriftUpper its thresholds for chunks of the same size,
	// DriftAlert whether it lies outside them.
	ReconstructionError jsonnum.Num `json:"reconstruction_error"`
	DriftLower          jsonnum.Num `json:"drift_lower"`
	DriftUpper          jsonnum.Num `json:"drift_upper"`
	DriftAlert          bool        `json:"drift_alert"`
	// Features holds each feature's two-sample Kolmogorov-Smirnov
	// statistic against the reference and its p-value.
	Features map[string]FeatureKS `json:"features"`
	// ThinSupport is the fraction of the chunk's rows in thin support of
	// the reference (k-nearest-neighbour density), ThinSupportLimit the
	// fraction above which the chunk is extrapolating (null for a
	// reference too small to tell).
	ThinSupport      jsonnum.Num `json:"thin_support"`
	ThinSupportLimit jsonnum.Num `json:"thin_support_limit"`
	// KSAdjustedP is the smallest per-feature KS p-value times the
	// number of features; KSAlert is set below DriftAlpha, and
	// ReconstructionAlert when the reconstruction error leaves its
	// thresholds: drift_alert is either.
	KSAdjustedP         jsonnum.Num `json:"ks_p_adjusted"`
	KSAlert             bool        `json:"ks_alert"`
	ReconstructionAlert bool        `json:"reconstruction_alert"`
}

// FeatureKS is one feature's univariate drift over a chunk.
type FeatureKS struct {
	KS jsonnum.Num `json:"ks"`
	P  jsonnum.Num `json:"p"`
}

// NewDriftView returns the JSON of a chunk's drift d under the model m
// and thresholds th; nil for nil.
func NewDriftView(d *ChunkDrift, m *DriftModel, th Thresholds) *DriftView {
	if d == nil {
		return nil
	}
	out := &DriftView{OutOfReference: jsonnum.Num(d.OutOfReference), Extrapolating: d.Extrapolating,
		ReconstructionError: jsonnum.Num(d.ReconstructionError), DriftLower: jsonnum.Num(th.Lower), DriftUpper: jsonnum.Num(th.Upper),
		DriftAlert: d.DriftAlert, Features: map[string]FeatureKS{},
		ThinSupport: jsonnum.Num(d.ThinSupport), ThinSupportLimit: jsonnum.Num(d.ThinLimit), KSAdjustedP: jsonnum.Num(d.KSAdjustedP),
		KSAlert: d.KSAlert, ReconstructionAlert: d.ReconstructionAlert, OutOfReferenceLimit: jsonnum.Num(d.RangeLimit)}
	for j, name := range m.Features {
		if n := d.Below[j] + d.Above[j]; n > 0 {
			if out.Outside == nil {
				out.Outside = map[string]int{}
			}
			out.Outside[name] = n
		}
	}
	for _, f := range d.Features {
		out.Features[f.Name] = FeatureKS{KS: jsonnum.Num(f.KS), P: jsonnum.Num(f.P)}
	}
	return out
}

// NoDriftNote is the warning for a model file without a drift model.
func NoDriftNote(model string) string {
	return fmt.Sprintf("%s records no reference ranges or drift model (written before genlens recorded them): chunks get no out_of_reference, extrapolating or drift; fit the model again with mse fit to get them", model)
}

// ReconstructionNote says what the reconstruction error's thresholds th
// are, in words for a report. When the error is 0 on every reference
// chunk (uncorrelated features: their reconstruction keeps every one of
// them) the thresholds [0, 0] would read as a bug, so it says instead
// that this signal cannot see drift and which one does.
func ReconstructionNote(th Thresholds) string {
	switch {
	case math.IsNaN(th.Lower) || math.IsNaN(th.Upper):
		return "reconstruction error thresholds unknown (fewer than two reference chunks)"
	case th.Upper == 0:
		return "reconstruction error 0 on every reference chunk: the features are uncorrelated, so their reconstruction keeps every one of them and cannot see drift; the per-feature Kolmogorov-Smirnov test (Bonferroni-corrected) is the drift signal here"
	}
	return fmt.Sprintf("reconstruction error thresholds [%s, %s]", strconv.FormatFloat(th.Lower, 'g', 4, 64), strconv.FormatFloat(th.Upper, 'g', 4, 64))
}
