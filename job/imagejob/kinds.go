package imagejob

import "github.com/genlens/genlens/job"

// Upper bounds on size-like fields of this package's requests (see
// job.MaxListLen): far above real use, noted beside each.
const (
	maxPRDCRows = 1 << 30 // a cap on rows; 0 means every row
	maxISSplits = 100_000 // the Inception Score's custom: 10
)

// Commands lists the commands of this package, for job/commands.
var Commands = []job.Command{
	job.Define(job.Spec[FeaturesRequest, FeaturesResult]{
		Name: "features", Group: "fidelity", New: NewFeaturesRequest, Run: Features,
		Inputs: func(r *FeaturesRequest) []job.Input {
			return []job.Input{{Field: "input", Path: r.Input, Images: true, Folder: true}}
		},
		Weights:   func(r *FeaturesRequest) *string { return &r.Weights },
		Named:     func(r *FeaturesResult) *string { return &r.Weights.Path },
		Artifacts: job.ArtifactsOf[FeaturesRequest]((*FeaturesResult).Artifacts),
		Text:      featuresText,
	}),
	job.Define(job.Spec[StatsRequest, StatsResult]{
		Name: "stats", Group: "fidelity", New: NewStatsRequest, Run: Stats,
		Inputs:  func(r *StatsRequest) []job.Input { return job.ImageInput("in", r.In) },
		Weights: func(r *StatsRequest) *string { return &r.Weights },
		Named:   func(r *StatsResult) *string { return imagesNamed(r.Images) },
		Artifacts: func(_ *StatsRequest, r *StatsResult) []job.Artifact {
			return []job.Artifact{r.Artifact("stats.npz")}
		},
		Text: statsText,
	}),
	job.Define(job.Spec[StatsMergeRequest, StatsMergeResult]{
		Name: "stats merge", Group: "fidelity", New: NewStatsMergeRequest, Run: StatsMerge,
		Inputs: func(r *StatsMergeRequest) []job.Input { return job.FileInputs("parts", r.Parts) },
		Artifacts: func(_ *StatsMergeRequest, r *StatsMergeResult) []job.Artifact {
			return []job.Artifact{r.Artifact("stats.npz")}
		},
		Text: statsMergeText,
	}),
	job.Define(job.Spec[CompareRequest, CompareResult]{
		Name: "compare", Group: "fidelity", New: NewCompareRequest, Run: Compare,
		Inputs: func(r *CompareRequest) []job.Input {
			return append(job.ImageInput("real", r.Real), job.ImageInput("fake", r.Fake)...)
		},
		Weights: func(r *CompareRequest) *string { return &r.Weights },
		Named:   func(r *CompareResult) *string { return imagesNamed(r.Images) },
		Text:    compareText,
	}),
	job.Define(job.Spec[ISRequest, ISResult]{
		Name: "is", Group: "fidelity", New: NewISRequest, Run: IS,
		Inputs: func(r *ISRequest) []job.Input {
			return append(job.FileInput("probs", r.Probs), job.ImageInput("images", r.Images)...)
		},
		Weights: func(r *ISRequest) *string { return &r.Weights },
		Named:   func(r *ISResult) *string { return imagesNamed(r.Images) },
		Text:    isText,
	}),
	job.Define(job.Spec[SelectRequest, SelectResult]{
		Name: "select", Group: "fidelity", New: NewSelectRequest, Run: Select,
		Inputs: func(r *SelectRequest) []job.Input {
			in := job.FileInputs("pools", r.Pools)
			for i := range in {
				in[i].Images = true
			}
			return append(in, job.ImageInput("ref", r.Ref)...)
		},
		Weights:   func(r *SelectRequest) *string { return &r.Weights },
		Named:     func(r *SelectResult) *string { return imagesNamed(r.Images) },
		Artifacts: job.ArtifactsOf[SelectRequest]((*SelectResult).Artifacts),
		Text:      selectText,
	}),
}

// imagesNamed returns the weights field of the images info of a result.
func imagesNamed(im *ImagesInfo) *string {
	if im == nil {
		return nil
	}
	return &im.Weights.Path
}
