package icljob

import "github.com/genlens/genlens/job"

// maxDrawsEach bounds M and K of a request (see job.MaxListLen): far
// above their defaults, 40 and 2000 (M x K is bounded too).
const maxDrawsEach = 10_000_000

// Commands lists the commands of this package, for job/commands.
var Commands = []job.Command{
	job.Define(job.Spec[HallucinationRunRequest, HallucinationRunResult]{
		Name: "hallucination run", Group: "icl", New: NewHallucinationRunRequest, Run: HallucinationRun,
		Inputs: func(r *HallucinationRunRequest) []job.Input {
			return append(job.FileInput("context", r.Context), job.FileInput("queries", r.Queries)...)
		},
		Artifacts: job.ArtifactsOf[HallucinationRunRequest]((*HallucinationRunResult).Artifacts),
		Outbound: func(r *HallucinationRunRequest) []job.Outbound {
			if r.Backend == "openai" {
				return []job.Outbound{{Field: "base_url", URL: r.BaseURL}}
			}
			return nil
		},
		Text: runText,
	}),
	job.Define(job.Spec[HallucinationSimulateRequest, HallucinationSimulateResult]{
		Name: "hallucination simulate", Group: "icl", New: NewHallucinationSimulateRequest, Run: HallucinationSimulate,
		Artifacts: job.ArtifactsOf[HallucinationSimulateRequest]((*HallucinationSimulateResult).Artifacts),
		Text:      simulateText,
	}),
}
