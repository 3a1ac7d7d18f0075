package job

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"gonum.org/v1/gonum/mat"

	"genlens/dataio"
	"genlens/kernel"
	"genlens/uncertainty"
)

// EntropyRequest is a request of `genlens entropy`: how uncertain is an
// LLM about each prompt, scored as the predictive kernel entropy of its
// sampled answers (Gruber & Buettner, "A Bias-Variance-Covariance
// Decomposition of Kernel Scores for Generative Models", ICML 2024,
// Algorithm 1), beside the lexical-similarity baseline, with the AUROC of
// both for detecting incorrect answers. Start from NewEntropyRequest,
// which holds the command line's defaults.
//
// The kernel-specific fields are optional so that one given for a kernel
// that would ignore it is refused, as the command line refuses the flag:
// T and Cumulative belong to the cs kernel, Embeddings, EmbeddingsKey and
// Gamma to the vector kernels.
type EntropyRequest struct {
	In            string  `json:"in"`
	Embeddings    string  `json:"embeddings,omitempty"`     // (rows, samples, d) array; else embeddings in the rows
	EmbeddingsKey string  `json:"embeddings_key,omitempty"` // array inside an Embeddings .npz
	Kernel        string  `json:"kernel"`                   // cs or a vector kernel (kernel.Names)
	T             *int    `json:"t,omitempty"`              // cs: subsequence length; nil means 2
	Cumulative    *bool   `json:"cumulative,omitempty"`     // cs: sum subsequence lengths 1..t (nil: true, as the authors' code); false: length t only, as the paper's text
	Gamma         string  `json:"gamma,omitempty"`          // rbf, laplacian, poly: dim, median or a number; "" means dim
	HoldoutFirst  bool    `json:"holdout_first"`            // judge samples[0], score samples[1:]
	Threshold     float64 `json:"threshold"`                // RougeL-F above which an answer is correct, in [0, 1)
}

// NewEntropyRequest returns a request with the command line's defaults.
func NewEntropyRequest() EntropyRequest {
	return EntropyRequest{Kernel: "cs", Threshold: uncertainty.DefaultRougeThreshold}
}

// Validate checks the fields that need no input file.
func (r *EntropyRequest) Validate() (verr error) {
	defer func() { verr = withDefault(verr, r, NewEntropyRequest()) }()
	_, err := r.options()
	return err
}

// options validates the request and returns the uncertainty options
// without the vector kernel, whose bandwidth the data resolve, and the
// bandwidth rule.
func (r *EntropyRequest) options() (entropyOptions, error) {
	var o entropyOptions
	t := 2
	if r.T != nil {
		t = *r.T
	}
	vector := r.Kernel != "cs"
	switch {
	case r.In == "":
		return o, Fieldf("in", "entropy: {in} FILE is required")
	case t < 1:
		return o, Fieldf("t", "{t} %d: want a positive subsequence length", t)
	case !(r.Threshold >= 0 && r.Threshold < 1):
		return o, Fieldf("threshold", "{threshold} %v: want a value in [0, 1)", r.Threshold)
	case vector && !slices.Contains(kernel.Names, r.Kernel):
		return o, Fieldf("kernel", "{kernel} %q: want cs, %s", r.Kernel, strings.Join(kernel.Names, ", "))
	}
	notFor := func(field, appliesTo string) error {
		return Fieldf(field, "{%s} applies only to %s, not {kernel} %s", field, appliesTo, r.Kernel)
	}
	if vector {
		switch {
		case r.T != nil:
			return o, notFor("t", "the cs kernel")
		case r.Cumulative != nil:
			return o, notFor("cumulative", "the cs kernel")
		}
	} else {
		vk := "the vector kernels (" + strings.Join(kernel.Names, ", ") + ")"
		switch {
		case r.Gamma != "":
			return o, notFor("gamma", "the rbf, laplacian and poly kernels")
		case r.Embeddings != "":
			return o, notFor("embeddings", vk)
		case r.EmbeddingsKey != "":
			return o, notFor("embeddings_key", vk)
		}
	}
	if r.EmbeddingsKey != "" && r.Embeddings == "" {
		return o, Fieldf("embeddings_key", "{embeddings_key} %s: give the .npz with {embeddings}", r.EmbeddingsKey)
	}
	thr := r.Threshold
	o.opt = uncertainty.Options{Sequence: kernel.CS{T: t, Cumulative: r.Cumulative == nil || *r.Cumulative},
		HoldoutFirst: r.HoldoutFirst, RougeThreshold: &thr}
	if vector {
		var err error
		if o.bw, err = KernelBandwidth("entropy", r.Kernel, r.Gamma, "dim"); err != nil {
			return o, err
		}
	}
	return o, nil
}

type entropyOptions struct {
	opt uncertainty.Options
	bw  kernel.Bandwidth
}

// EntropyResult is the result of `genlens entropy`; it marshals to the
// command's --json document.
type EntropyResult struct {
	Items   []EntropyItem  `json:"items"`
	Summary EntropySummary `json:"summary"`
}

// EntropyItem is one prompt's scores. They are null, with a reason, when
// the prompt has fewer than two usable samples; Correct is null when
// correctness is unknown (no label, and no answer or no reference).
type EntropyItem struct {
	ID                string `json:"id"`
	KernelEntropy     Num    `json:"kernel_entropy"`
	LexicalSimilarity Num    `json:"lexical_similarity"`
	Correct           *bool  `json:"correct"`
	Reason            string `json:"reason,omitempty"`
}

// EntropySummary aggregates the items: AUROC of each score for detecting
// incorrect answers over the labelled prompts with scores (null when they
// are all correct or all incorrect).
type EntropySummary struct {
	N        int          `json:"n"`
	Skipped  int          `json:"skipped"`
	Labelled int          `json:"labelled"`
	Accuracy Num          `json:"accuracy"`
	AUROC    EntropyAUROC `json:"auroc"`
	Kernel   string       `json:"kernel"`
}

// EntropyAUROC holds the AUROC of each uncertainty score.
type EntropyAUROC struct {
	KernelEntropy     Num `json:"kernel_entropy"`
	LexicalSimilarity Num `json:"lexical_similarity"`
}

// Entropy runs `genlens entropy`: it reads the answers (and embeddings)
// through env.FS, scores every prompt with uncertainty.Evaluate and
// reports the prompts done through env.Progress.
func Entropy(ctx context.Context, env Env, req EntropyRequest) (*EntropyResult, error) {
	o, err := req.options()
	if err != nil {
		return nil, err
	}
	fsys := env.fsys()
	recs, err := dataio.ReadRecordsFS(fsys, req.In)
	if err != nil {
		return nil, err
	}
	prompts := make([]uncertainty.Prompt, len(recs))
	for i, r := range recs {
		prompts[i] = uncertainty.Prompt{ID: r.ID, Samples: r.Samples, Answer: r.Answer, References: r.Reference, Correct: r.Correct}
	}
	opt := o.opt
	if req.Kernel != "cs" {
		if err := attachEmbeddings(env, prompts, recs, req); err != nil {
			return nil, err
		}
		if opt.Kernel, err = ResolveKernel(req.Kernel, o.bw, scoredEmbeddings(prompts, req.HoldoutFirst), req.In); err != nil {
			return nil, err
		}
	}
	opt.Progress = env.Progress
	results, sum, err := uncertainty.Evaluate(ctx, prompts, opt)
	if err != nil {
		return nil, err
	}
	out := &EntropyResult{Items: make([]EntropyItem, len(results))}
	for i, r := range results {
		// A zero entropy (every pair at k = 0) is computed as -0; +0
		// keeps it from printing as -0 in tables and CSV.
		out.Items[i] = EntropyItem{ID: r.ID, KernelEntropy: Num(r.KernelEntropy + 0),
			LexicalSimilarity: Num(r.LexicalSimilarity + 0), Correct: r.Correct, Reason: r.Reason}
	}
	out.Summary = EntropySummary{N: sum.N, Skipped: sum.Skipped, Labelled: sum.Labelled, Accuracy: Num(sum.Accuracy),
		AUROC:  EntropyAUROC{KernelEntropy: Num(sum.AUROCKernelEntropy), LexicalSimilarity: Num(sum.AUROCLexicalSimilarity)},
		Kernel: opt.Sequence.String()}
	if opt.Kernel != nil {
		out.Summary.Kernel = opt.Kernel.String()
	}
	return out, nil
}

// attachEmbeddings sets each prompt's embedding rows from the records or
// from req.Embeddings, and rejects rows a vector kernel cannot score. A
// row with no samples gets no embeddings: it is skipped with a reason, as
// with the cs kernel.
func attachEmbeddings(env Env, prompts []uncertainty.Prompt, recs []dataio.Record, req EntropyRequest) error {
	if req.Embeddings != "" {
		arr, err := dataio.ReadArrayFS(env.fsys(), req.Embeddings, dataio.ReadOptions{Key: req.EmbeddingsKey})
		if err != nil {
			return err
		}
		if arr.Rank() != 3 {
			return &dataio.InputError{File: req.Embeddings, Msg: fmt.Sprintf("want a 3-D array (rows, samples, d), got shape %v", arr.Shape)}
		}
		if arr.Shape[0] != len(recs) {
			return &dataio.InputError{File: req.Embeddings, Msg: fmt.Sprintf("%d rows of embeddings for %d rows in %s", arr.Shape[0], len(recs), req.In)}
		}
		for i, r := range recs {
			if len(r.Samples) == 0 {
				continue
			}
			if len(r.Samples) != arr.Shape[1] {
				return &dataio.InputError{File: req.In, Line: r.Line, Field: "samples", Msg: fmt.Sprintf("%d samples, but %s has %d per row", len(r.Samples), req.Embeddings, arr.Shape[1])}
			}
			prompts[i].Embeddings = mat.NewDense(arr.Shape[1], arr.Shape[2], arr.Slice(i).Data)
		}
		return nil
	}
	d := -1
	for i, r := range recs {
		if len(r.Samples) == 0 && len(r.Embeddings) == 0 {
			continue
		}
		if len(r.Embeddings) == 0 {
			return &dataio.InputError{File: req.In, Line: r.Line, Field: "embeddings", Msg: fmt.Sprintf("missing; {kernel} %s needs one embedding per sample (or give {embeddings} E.npy)", req.Kernel)}
		}
		if len(r.Embeddings) != len(r.Samples) {
			return &dataio.InputError{File: req.In, Line: r.Line, Field: "embeddings", Msg: fmt.Sprintf("%d embeddings for %d samples", len(r.Embeddings), len(r.Samples))}
		}
		if d < 0 {
			d = len(r.Embeddings[0])
		}
		m := mat.NewDense(len(r.Embeddings), d, nil)
		for j, v := range r.Embeddings {
			if len(v) != d {
				return &dataio.InputError{File: req.In, Line: r.Line, Field: fmt.Sprintf("embeddings[%d]", j), Msg: fmt.Sprintf("has %d values, earlier rows have %d", len(v), d)}
			}
			m.SetRow(j, v)
		}
		prompts[i].Embeddings = m
	}
	return nil
}

// scoredEmbeddings returns the embedding rows the entropies are computed
// from (without each prompt's first sample under holdoutFirst), for the
// bandwidth rules: the held-out answer must not set the kernel that
// scores the others.
func scoredEmbeddings(prompts []uncertainty.Prompt, holdoutFirst bool) []*mat.Dense {
	var sets []*mat.Dense
	for _, p := range prompts {
		if p.Embeddings == nil {
			continue
		}
		n, d := p.Embeddings.Dims()
		switch {
		case !holdoutFirst:
			sets = append(sets, p.Embeddings)
		case n > 1:
			sets = append(sets, p.Embeddings.Slice(1, n, 0, d).(*mat.Dense))
		}
	}
	return sets
}
