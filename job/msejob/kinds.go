package msejob

import (
	"strings"

	"github.com/genlens/genlens/job"
)

// Upper bounds on size-like fields of this package's requests (see
// job.MaxListLen): far above real use, noted beside each.
const (
	maxChunkRows  = 1 << 30   // mse estimate's chunk_size
	maxChunks     = 1_000_000 // mse estimate's chunks
	maxFolds      = 100       // mse fit's cross-fitting folds: 5
	maxMSEMethods = 100       // mse bench's methods: ten exist
)

// Commands lists the commands of this package, for job/commands.
var Commands = []job.Command{
	job.Define(job.Spec[FitRequest, FitResult]{
		Name: "mse fit", Group: "production", New: NewFitRequest, Run: Fit,
		Inputs: func(r *FitRequest) []job.Input { return job.FileInput("train", r.Train) },
		// The model is the one artifact, named by the request's model
		// field (the command line writes it to that path).
		Artifacts: func(q *FitRequest, r *FitResult) []job.Artifact {
			return []job.Artifact{{Name: q.Model, Write: r.WriteModel}}
		},
		Text: fitText,
	}),
	job.Define(job.Spec[EstimateRequest, EstimateResult]{
		Name: "mse estimate", Group: "production", New: NewEstimateRequest, Run: Estimate,
		Inputs: func(r *EstimateRequest) []job.Input {
			return append(job.FileInput("model", r.Model), job.FileInput("data", r.Data)...)
		},
		Artifacts: job.ArtifactsOf[EstimateRequest]((*EstimateResult).Artifacts),
		Text:      estimateText,
	}),
	job.Define(job.Spec[BenchRequest, BenchResult]{
		Name: "mse bench", Group: "production", New: NewBenchRequest, Run: Bench,
		Inputs: func(r *BenchRequest) []job.Input {
			if strings.HasPrefix(r.Dataset, "synthetic-") {
				return nil // generated, no file
			}
			return job.FileInput("dataset", r.Dataset)
		},
		Artifacts: job.ArtifactsOf[BenchRequest]((*BenchResult).Artifacts),
		Text:      benchText,
	}),
}
