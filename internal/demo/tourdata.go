package demo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/genlens/genlens/fault"
	"github.com/genlens/genlens/internal/testkit/llmtest"
	"github.com/genlens/genlens/job"
	"github.com/genlens/genlens/job/icljob"
	"github.com/genlens/genlens/job/llmjob"
)

// TourFiles are the files WriteTourData writes, the inputs of the
// README's examples 2 to 4.
var TourFiles = []string{"prompts.jsonl", "answers.jsonl", "reference.csv", "today.csv"}

// The test model of the offline LLM tour (docs/llm.md), which
// `genlens hallucination serve-model --inputs cat,dog,fish --labels yes,no`
// serves: an exact Bayesian classifier that learns each input's label
// from the examples in its prompt.
const (
	TourInputs     = "cat,dog,fish"
	TourLabels     = "yes,no"
	TourModel      = "genlens-categorical"
	TourEmbedModel = "genlens-embedding"
)

// WriteTourData writes TourFiles into dir (created if missing), refusing
// to replace any file already there (a fault.InputError naming it):
//
//   - prompts.jsonl: the 30 in-context prompts of docs/llm.md's tour
//     (0 to 5 labelled examples of an input, then its query; the cat
//     prompts' examples carry the wrong label);
//   - answers.jsonl: 10 sampled answers and a greedy one per prompt, with
//     embeddings, drawn from the tour's test model served on a loopback
//     port for the duration, as `genlens sample --n 10 --greedy --seed 1
//     --embed-model genlens-embedding` draws them;
//   - reference.csv: 500 labelled rows of a deployed price model
//     (columns x0, x1, price_pred, price);
//   - today.csv: a week of traffic, 96 rows a day (columns ts, x0, x1,
//     price_pred, price), whose x0 drifts upwards from day 4 on and whose
//     labels (price) have arrived for the first 3 days only.
//
// The relation is that of docs/service.md's tour: m = 2 x0 + sin(3 x1),
// price = 10 + m + 0.4 (1 + x0²) e with e ~ N(0, 1), and the deployed
// model predicts 10 + m + 0.2 x0, so its error grows with x0 and the
// drift raises the MSE. The same seed gives the same files.
func WriteTourData(ctx context.Context, dir string, seed uint64) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, name := range TourFiles {
		p := filepath.Join(dir, name)
		if _, err := os.Lstat(p); err == nil {
			return &fault.InputError{File: p, Msg: fmt.Sprintf("exists; demo --data writes %s and replaces none of them", strings.Join(TourFiles, ", "))}
		} else if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	r := rand.New(rand.NewPCG(seed, 0x7047))
	if err := writeNew(filepath.Join(dir, "reference.csv"), priceRows(r, 500, false)); err != nil {
		return err
	}
	if err := writeNew(filepath.Join(dir, "today.csv"), priceRows(r, 7*96, true)); err != nil {
		return err
	}
	if err := writeNew(filepath.Join(dir, "prompts.jsonl"), tourPrompts()); err != nil {
		return err
	}
	return sampleTourAnswers(ctx, dir)
}

// writeNew writes b to a file that must not exist yet.
func writeNew(path string, b []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// priceRows returns n rows of the price model as CSV. today's rows carry
// a timestamp every 15 minutes from 2026-11-23, drift from day 4 on (x0
// moves up by 0.5 a day) and are labelled on days 0 to 2 only.
func priceRows(r *rand.Rand, n int, today bool) []byte {
	var b strings.Builder
	if today {
		b.WriteString("ts,")
	}
	b.WriteString("x0,x1,price_pred,price\n")
	start := time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)
	for i := 0; i < n; i++ {
		day := i / 96
		x0, x1 := r.NormFloat64(), r.NormFloat64()
		if today && day >= 4 {
			x0 += 0.5 * float64(day-3)
		}
		m := 2*x0 + math.Sin(3*x1)
		price := 10 + m + 0.4*(1+x0*x0)*r.NormFloat64()
		label := fmt.Sprintf("%.4f", price)
		if today {
			fmt.Fprintf(&b, "%s,", start.Add(time.Duration(i)*15*time.Minute).Format(time.RFC3339))
			if day >= 3 {
				label = ""
			}
		}
		fmt.Fprintf(&b, "%.4f,%.4f,%.4f,%s\n", x0, x1, 10+m+0.2*x0, label)
	}
	return []byte(b.String())
}

// tourPrompts returns docs/llm.md's 30 prompts as JSONL: prompt i asks
// for the label of input i mod 3 (cats and fish are "yes", dogs "no")
// after i mod 6 examples of it, of which those with (7i + 3j) mod 3 = 0
// carry the wrong label.
func tourPrompts() []byte {
	inputs := strings.Split(TourInputs, ",")
	var b strings.Builder
	for i := 0; i < 30; i++ {
		x := inputs[i%3]
		ref, wrong := "yes", "no"
		if x == "dog" {
			ref, wrong = "no", "yes"
		}
		var p strings.Builder
		for j := 1; j <= i%6; j++ {
			y := ref
			if (i*7+j*3)%3 == 0 {
				y = wrong
			}
			fmt.Fprintf(&p, "Input: %s\nLabel: %s\n\n", x, y)
		}
		fmt.Fprintf(&p, "Input: %s\nLabel:", x)
		line, err := json.Marshal(map[string]string{"id": fmt.Sprintf("q%d", i), "prompt": p.String(), "reference": ref})
		if err != nil {
			panic(err) // strings always marshal
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	return []byte(b.String())
}

// sampleTourAnswers serves the tour's test model on a loopback port and
// samples dir/prompts.jsonl into dir/answers.jsonl, as `genlens sample`
// would against `genlens hallucination serve-model`.
func sampleTourAnswers(ctx context.Context, dir string) error {
	def := icljob.NewHallucinationRunRequest()
	m, inputs, labels, err := icljob.NamedCategorical(TourInputs, TourLabels, def.Alpha)
	if err != nil {
		return err
	}
	h, err := llmtest.NewHandler(llmtest.Config{Model: m, Inputs: inputs, Labels: labels, ModelName: TourModel})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("demo: serving the test model: %w", err)
	}
	sctx, stop := context.WithCancel(ctx)
	served := make(chan error, 1)
	go func() { served <- llmtest.Serve(sctx, ln, h) }()
	req := llmjob.NewSampleRequest()
	seed := int64(1)
	req.Prompts, req.BaseURL, req.Model, req.Greedy, req.Seed = filepath.Join(dir, "prompts.jsonl"), "http://"+ln.Addr().String()+"/v1", TourModel, true, &seed
	req.EmbedModel, req.Out, req.Concurrency = TourEmbedModel, filepath.Join(dir, "answers.jsonl"), 1
	_, err = llmjob.Sample(ctx, job.CLIEnv(nil, nil), req)
	stop()
	if serr := <-served; err == nil && serr != nil && !errors.Is(serr, context.Canceled) {
		err = serr
	}
	return err
}
