package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/term"

	"github.com/genlens/genlens/job"
	"github.com/genlens/genlens/job/llmjob"
)

// sampleFlags are the flags of sample, which entropy's one-step form
// shares.
type sampleFlags struct {
	req  llmjob.SampleRequest
	seed int64
	topP float64
}

func (s *sampleFlags) register(fl *pflag.FlagSet) {
	f := &s.req
	fl.StringVar(&f.Prompts, "prompts", "", `prompt rows (JSONL): {"id", "prompt"|"messages", "reference"?, ...}`)
	fl.StringVar(&f.BaseURL, "base-url", "", "API root of the OpenAI-compatible server, e.g. http://127.0.0.1:8000/v1")
	fl.StringVar(&f.Model, "model", "", "the server's model name")
	fl.IntVar(&f.N, "n", f.N, "samples per prompt")
	fl.Float64Var(&f.Temperature, "temperature", f.Temperature, "sampling temperature")
	fl.IntVar(&f.MaxTokens, "max-tokens", f.MaxTokens, "tokens per answer at most")
	fl.Float64Var(&s.topP, "top-p", 1, "nucleus sampling; sent only when given")
	fl.Int64Var(&s.seed, "seed", 0, "random seed: each prompt's requests get seeds mixed from it and the prompt's id; none sent when not given")
	fl.StringVar(&f.API, "api", f.API, "chat (/chat/completions) or completions (/completions)")
	fl.StringVar(&f.APIKeyEnv, "api-key-env", "", "environment variable holding the API key (never printed, logged or written)")
	fl.BoolVar(&f.Greedy, "greedy", false, "also draw one temperature-0 answer per prompt, stored as 'answer'")
	fl.StringVar(&f.EmbedModel, "embed-model", "", "embed every sample with this model (/embeddings), stored as 'embeddings'")
	fl.StringVar(&f.EmbedBaseURL, "embed-base-url", "", "API root of the embedding server (default: --base-url)")
	fl.IntVar(&f.Concurrency, "concurrency", f.Concurrency, "requests in flight")
	fl.Float64Var(&f.RPM, "rpm", 0, "requests a minute at most (0: no limit)")
	fl.IntVar(&f.Retries, "retries", f.Retries, "retries of a request on 429, 5xx, timeouts, connection errors and cut-off answers")
	fl.DurationVar(&f.Timeout, "timeout", f.Timeout, "time limit of one request attempt")
}

// apply copies the flags that count only when given into the request.
func (s *sampleFlags) apply(cmd *cobra.Command) llmjob.SampleRequest {
	r := s.req
	if cmd.Flags().Changed("seed") {
		v := s.seed
		r.Seed = &v
	}
	if cmd.Flags().Changed("top-p") {
		v := s.topP
		r.TopP = &v
	}
	return r
}

func newSampleCmd() *cobra.Command {
	s := &sampleFlags{req: llmjob.NewSampleRequest()}
	var asJSON bool
	cmd := &cobra.Command{
		Use:     "sample --prompts P.jsonl --base-url URL --model NAME --out ANSWERS.jsonl [flags]",
		Short:   "Sample answers (and embeddings) from an OpenAI-compatible endpoint",
		Long:    helpText("sample"),
		Example: helpExamples("sample"),
		Args:    args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			f := s.apply(cmd)
			if f.Out == "" {
				return badUsage("sample: --out ANSWERS.jsonl is required (finished prompts are appended to it)")
			}
			_, err := runSample(cmd, f, asJSON, cmd.OutOrStdout())
			return err
		},
	}
	s.register(cmd.Flags())
	markGivenOnly(cmd, "seed", "top-p")
	cmd.Flags().StringVar(&s.req.Out, "out", "", "answers file (JSONL) to append to; ids already in it are skipped")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the summary as one JSON document")
	return cmd
}

// runSample checks and runs a sample request with a progress bar, then
// prints its summary on w (entropy's one-step form passes stderr).
func runSample(cmd *cobra.Command, f llmjob.SampleRequest, asJSON bool, w io.Writer) (*llmjob.SampleResult, error) {
	if err := guardOutFile("--out", f.Out); err != nil {
		return nil, err
	}
	if in := sameFileAs(f.Out, f.Prompts); in != "" {
		return nil, badUsage("--out %s is the prompts file", f.Out)
	}
	report, meter, finish := meterBar(cmd.ErrOrStderr(), "sample", "prompts", "tokens")
	env := job.CLIEnv(report, warnings(cmd))
	env.Models = models
	env.Meter = meter
	res, err := llmjob.Sample(cmd.Context(), env, f)
	finish()
	if err != nil {
		if res != nil && res.Sampled > 0 {
			fmt.Fprintf(cmd.ErrOrStderr(), "genlens: sample: %d prompts saved in %s; run the same command again to sample the rest\n", res.Sampled, f.Out)
		}
		return res, err
	}
	if asJSON {
		return res, emit(cmd, "", nil, true, res, nil)
	}
	printSample(w, res)
	return res, nil
}

func printSample(w io.Writer, r *llmjob.SampleResult) {
	fmt.Fprintf(w, "prompts %d: sampled %d, skipped %d already in %s\n", r.Prompts, r.Sampled, r.Skipped, r.Out)
	fmt.Fprintf(w, "answers %d from %d requests (%d retries)\n", r.Samples, r.Requests, r.Retries)
	if len(r.Failed) > 0 {
		fmt.Fprintf(w, "failed %d prompts the server refused (first: %q, line %d: %s); the others are sampled\n", len(r.Failed), r.Failed[0].ID, r.Failed[0].Line, r.Failed[0].Error)
	}
	fmt.Fprintf(w, "tokens %d prompt, %d completion; %.3g prompts/s, %.4g tokens/s in %.1fs\n",
		r.Tokens.PromptTokens, r.Tokens.CompletionTokens, float64(r.PromptsPerSecond), float64(r.TokensPerSecond), float64(r.Seconds))
}

// meterBar returns Env.Progress and Env.Meter callbacks that draw one bar
// of steps (unit, a rate a second, and the time left) with the rate of
// the metered quantity in its description, on stderr when stderr is a
// terminal, and nothing otherwise.
func meterBar(stderr io.Writer, label, unit, metered string) (report func(done, total int), meter func(string, int64), finish func()) {
	cw, _ := stderr.(consoleWriter)
	f, ok := cw.w.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return func(int, int) {}, func(string, int64) {}, func() {}
	}
	var (
		bar   *progressbar.ProgressBar
		prev  *progressbar.ProgressBar
		count int64
		start = time.Now()
		shown int
	)
	finish = func() {
		cw.c.mu.Lock()
		defer cw.c.mu.Unlock()
		if bar != nil {
			_ = bar.Finish()
			cw.c.bar, cw.c.shown = prev, false
		}
		bar = nil
	}
	report = func(done, total int) {
		cw.c.mu.Lock()
		defer cw.c.mu.Unlock()
		if bar == nil {
			if total < 1 {
				return
			}
			bar = progressbar.NewOptions(total, progressbar.OptionSetWriter(f), progressbar.OptionSetDescription(label),
				progressbar.OptionShowCount(), progressbar.OptionShowIts(), progressbar.OptionSetItsString(unit),
				progressbar.OptionSetPredictTime(true), progressbar.OptionThrottle(100*time.Millisecond), progressbar.OptionClearOnFinish())
			prev, cw.c.bar = cw.c.bar, bar
			start = time.Now()
		}
		if done > shown {
			if el := time.Since(start).Seconds(); el > 0 {
				bar.Describe(fmt.Sprintf("%s %.0f %s/s", label, float64(count)/el, metered))
			}
			_ = bar.Add(done - shown)
			shown = done
			cw.c.shown = true
		}
	}
	meter = func(name string, delta int64) {
		if name == metered {
			cw.c.mu.Lock()
			count += delta
			cw.c.mu.Unlock()
		}
	}
	return report, meter, finish
}

// oneStepAnswers is where entropy's one-step form writes its samples
// without --out-answers: a file in a fresh temporary folder, removed after.
func oneStepAnswers() (path string, cleanup func(), err error) {
	dir, err := os.MkdirTemp("", "genlens-sample-")
	if err != nil {
		return "", nil, err
	}
	return filepath.Join(dir, "answers.jsonl"), func() { os.RemoveAll(dir) }, nil
}
