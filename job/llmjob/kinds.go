package llmjob

import (
	"slices"

	"github.com/genlens/genlens/job"
)

// Upper bounds on size-like fields of this package's requests (see
// job.MaxListLen): far above real use, noted beside each.
const (
	maxCSLength = 1000 // entropy's cs subsequence length, default 2
)

// Commands lists the commands of this package, for job/commands.
var Commands = []job.Command{
	job.Define(job.Spec[SampleRequest, SampleResult]{
		Name: "sample", Group: "kernel", New: NewSampleRequest, Run: Sample,
		Inputs:    func(r *SampleRequest) []job.Input { return job.FileInput("prompts", r.Prompts) },
		Artifacts: job.ArtifactsOf[SampleRequest]((*SampleResult).Artifacts),
		Outbound:  func(r *SampleRequest) []job.Outbound { return r.outbound() },
		ModelDirs: func(r *SampleRequest) map[string]*string { return map[string]*string{"weights": &r.Weights} },
		Text:      sampleText,
	}),
	job.Define(job.Spec[EntropyRequest, EntropyResult]{
		Name: "entropy", Group: "kernel", New: NewEntropyRequest, Run: Entropy,
		Inputs: func(r *EntropyRequest) []job.Input {
			return slices.Concat(job.FileInput("in", r.In), job.FileInput("embeddings", r.Embeddings), job.FileInput("ptrue_prompt", r.PTruePrompt),
				job.FileInput("ptrue_empirical_prompt", r.PTrueEmpiricalPrompt), job.FileInput("verbalized_1s_prompt", r.Verbalized1SPrompt),
				job.FileInput("verbalized_2s_prompt", r.Verbalized2SPrompt), job.FileInput("linguistic_1s_prompt", r.Linguistic1SPrompt))
		},
		Artifacts: job.ArtifactsOf[EntropyRequest]((*EntropyResult).Artifacts),
		Outbound:  func(r *EntropyRequest) []job.Outbound { return r.outbound() },
		ModelDirs: func(r *EntropyRequest) map[string]*string {
			return map[string]*string{"weights": &r.Weights, "nli_weights": &r.NLIWeights}
		},
		Text: entropyText,
	}),
	job.Define(job.Spec[DecomposeRequest, DecomposeResult]{
		Name: "decompose", Group: "kernel", New: NewDecomposeRequest, Run: Decompose,
		Inputs: func(r *DecomposeRequest) []job.Input {
			return append(job.FileInputs("models", r.Models), job.FileInput("targets", r.Targets)...)
		},
		Text: decomposeText,
	}),
	job.Define(job.Spec[CorrelateRequest, CorrelateResult]{
		Name: "correlate", Group: "kernel", New: NewCorrelateRequest, Run: Correlate,
		Inputs:    func(r *CorrelateRequest) []job.Input { return job.FileInputs("files", r.Files) },
		Artifacts: job.ArtifactsOf[CorrelateRequest]((*CorrelateResult).Artifacts),
		Text:      correlateText,
	}),
}
