package reprjob

import "github.com/genlens/genlens/job"

// Upper bounds on size-like fields of this package's requests (see
// job.MaxListLen): far above real use, noted beside each.
const (
	maxClusters  = 10_000     // disentangle: 5
	maxGramBatch = 4096       // disentangle's CKA and CMS batches (an n x n Gram each): 100, 150
	maxCKAImages = 10_000_000 // disentangle: 1000
)

// Commands lists the commands of this package, for job/commands.
var Commands = []job.Command{
	job.Define(job.Spec[CKARequest, CKAResult]{
		Name: "cka", Group: "image", New: NewCKARequest, Run: CKA,
		Inputs: func(r *CKARequest) []job.Input { return append(job.FileInput("x", r.X), job.FileInput("y", r.Y)...) },
		Text:   ckaText,
	}),
	job.Define(job.Spec[DisentangleRequest, DisentangleResult]{
		Name: "disentangle", Group: "image", New: NewDisentangleRequest, Run: Disentangle,
		Inputs: func(r *DisentangleRequest) []job.Input {
			return append(append(job.FileInput("train", r.Train), job.FileInput("test", r.Test)...), job.FileInputs("generated", r.Generated)...)
		},
		Artifacts: job.ArtifactsOf[DisentangleRequest]((*DisentangleResult).Artifacts),
		Text:      disentangleText,
	}),
	job.Define(job.Spec[EmbedRequest, EmbedResult]{
		Name: "embed", Group: "kernel", New: NewEmbedRequest, Run: Embed,
		Inputs:    func(r *EmbedRequest) []job.Input { return job.FileInput("in", r.In) },
		ModelDirs: func(r *EmbedRequest) map[string]*string { return map[string]*string{"weights": &r.Weights} },
		Artifacts: job.ArtifactsOf[EmbedRequest]((*EmbedResult).Artifacts),
		Text:      embedText,
	}),
}
