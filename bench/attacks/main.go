// Command attacks writes the hostile inputs of bench/attacks/run.sh, the
// command-line forms of the attacks on genlens (files whose declared sizes
// are far beyond their bytes), and serves the upstreams: one answering
// every sampled choice with 30 MB of words, one answering a single 30 MB
// choice whatever n asks (/one/v1: the client tops up), an honest one
// with OpenAI-shaped logprobs (/logprobs/v1), and a judge that never
// answers (/hang/v1). wide-drift gives a check model (mse fit's) a drift
// reference of 200,000 rows of its first feature, 1.6 MB of JSON.
//
//	go run ./bench/attacks gen DIR
//	go run ./bench/attacks upstream 127.0.0.1:PORT
//	go run ./bench/attacks wide-drift CHECK.json
package main

import (
	"archive/zip"
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"log"
	"math"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/genlens/genlens/metric/frechet"
)

func main() {
	log.SetFlags(0)
	if len(os.Args) != 3 {
		log.Fatal("usage: attacks gen DIR | attacks upstream ADDR | attacks wide-drift CHECK.json")
	}
	var err error
	switch os.Args[1] {
	case "gen":
		err = gen(os.Args[2])
	case "upstream":
		err = upstream(os.Args[2])
	case "wide-drift":
		err = wideDrift(os.Args[2], 200_000)
	default:
		err = fmt.Errorf("unknown command %q", os.Args[1])
	}
	if err != nil {
		log.Fatal(err)
	}
}

// wide is the dimension of the statistics files: a 16384² float64
// matrix is 2 GiB, declared in a file of about 40 MB.
const wide = 16384

func gen(dir string) error {
	if err := os.MkdirAll(filepath.Join(dir, "img"), 0o755); err != nil {
		return err
	}
	listing := frechet.Listing{Kind: "features", Count: 5, Cols: wide, SHA256: strings.Repeat("ab", 32)}
	// A part of 1e9 shards, in a few KB.
	var b bytes.Buffer
	small := &frechet.Part{N: 5, Mean: []float64{0, 0}, Scatter: mat.NewSymDense(2, nil), Shards: 1_000_000_000,
		Listing: frechet.Listing{Kind: "features", Count: 5, Cols: 2, SHA256: listing.SHA256}}
	if err := frechet.EncodePart(&b, small); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "part-1e9-shards.npz"), b.Bytes(), 0o644); err != nil {
		return err
	}
	// A 16384-d part of one shard: its scalars and texts are those of a
	// small part's (re-deflated), its mean and scatter streamed.
	b.Reset()
	small.Shards = 1
	small.Listing = listing
	if err := frechet.EncodePart(&b, small); err != nil {
		return err
	}
	if err := wideNPZ(filepath.Join(dir, "part-16384.npz"), b.Bytes(), "mean", "scatter"); err != nil {
		return err
	}
	// Statistics (mu, sigma) of 16384 dimensions, and 20 rows of
	// features of as many to compare with them.
	if err := wideNPZ(filepath.Join(dir, "ref-16384.npz"), nil, "mu", "sigma"); err != nil {
		return err
	}
	var feats bytes.Buffer
	feats.Write(npyHeader("<f4", fmt.Sprintf("(20, %d)", wide)))
	r := rand.New(rand.NewPCG(1, 2))
	for range 20 * wide {
		binary.Write(&feats, binary.LittleEndian, float32(r.NormFloat64()))
	}
	if err := os.WriteFile(filepath.Join(dir, "fake-16384.npy"), feats.Bytes(), 0o644); err != nil {
		return err
	}
	// Answers for entropy: 34 KB of words for the cs kernel at t = 1000;
	// 978 KB for RougeL.
	if err := answers(filepath.Join(dir, "answers-34k.jsonl"), 1, 10, 3400, r); err != nil {
		return err
	}
	if err := answers(filepath.Join(dir, "answers-978k.jsonl"), 10, 10, 9780, r); err != nil {
		return err
	}
	// Answers whose logprobs of -1e308 sum to -Inf: pe, ne and
	// perplexity infinite.
	var inf bytes.Buffer
	for i, lp := range []string{"-0.1", "-3", "-1e308", "-1"} {
		fmt.Fprintf(&inf, `{"id":"q%d","samples":["a","b"],"correct":%v,"logprobs":[[{"token":"a","logprob":%s},{"token":"a","logprob":%s}],[{"token":"b","logprob":%s}]],"answer_logprobs":[{"token":"a","logprob":%s},{"token":"a","logprob":%s}]}`+"\n",
			i, i%2 == 0, lp, lp, lp, lp, lp)
	}
	if err := os.WriteFile(filepath.Join(dir, "answers-inf.jsonl"), inf.Bytes(), 0o644); err != nil {
		return err
	}
	var prompts bytes.Buffer
	for i := range 8 {
		fmt.Fprintf(&prompts, `{"id":"p%d","prompt":"say something"}`+"\n", i)
	}
	if err := os.WriteFile(filepath.Join(dir, "prompts-8.jsonl"), prompts.Bytes(), 0o644); err != nil {
		return err
	}
	// A check model's training rows, one feature, and production rows.
	var train, op bytes.Buffer
	train.WriteString("x,f,y\n")
	op.WriteString("x,f\n")
	r1 := rand.New(rand.NewPCG(5, 6))
	for i := range 2500 {
		x := r1.NormFloat64()
		if i < 500 {
			fmt.Fprintf(&train, "%.6f,%.6f,%.6f\n", x, x, x+0.3*r1.NormFloat64())
		} else {
			fmt.Fprintf(&op, "%.6f,%.6f\n", x, x)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "train-1f.csv"), train.Bytes(), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "op-1f.csv"), op.Bytes(), 0o644); err != nil {
		return err
	}
	// 2000 RGB PNGs of 256x256 for the pixel-cluster diagnostics: a few
	// KB each on disk, a 2000 x 196608 float64 matrix (3 GiB) read.
	pngs := filepath.Join(dir, "png-2000")
	if err := os.MkdirAll(pngs, 0o755); err != nil {
		return err
	}
	var one bytes.Buffer
	tile := image.NewNRGBA(image.Rect(0, 0, 256, 256))
	for i := range tile.Pix {
		tile.Pix[i] = uint8(i / 1024)
	}
	if err := png.Encode(&one, tile); err != nil {
		return err
	}
	for i := range 2000 {
		if err := os.WriteFile(filepath.Join(pngs, fmt.Sprintf("%04d.png", i)), one.Bytes(), 0o644); err != nil {
			return err
		}
	}
	// One prompt of 1000 samples of 150 words: half a million pairs of
	// samples, a minute of RougeL similarities for the graph scores.
	var long bytes.Buffer
	vocab := strings.Fields("the a city capital country river north south old new large small answer is of in")
	long.WriteString(`{"id":"p","answer":"the capital city","samples":[`)
	for i := range 1000 {
		if i > 0 {
			long.WriteByte(',')
		}
		long.WriteByte('"')
		for w := range 150 {
			if w > 0 {
				long.WriteByte(' ')
			}
			long.WriteString(vocab[r.IntN(len(vocab))])
		}
		long.WriteByte('"')
	}
	long.WriteString("]}\n")
	if err := os.WriteFile(filepath.Join(dir, "answers-1x1000.jsonl"), long.Bytes(), 0o644); err != nil {
		return err
	}
	// One image for the network whose weights are hostile.
	img := image.NewRGBA(image.Rect(0, 0, 64, 64))
	for i := range img.Pix {
		img.Pix[i] = uint8(i)
	}
	img.Set(0, 0, color.RGBA{255, 0, 0, 255})
	f, err := os.Create(filepath.Join(dir, "img", "a.png"))
	if err != nil {
		return err
	}
	if err := png.Encode(f, img); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// wideDrift rewrites the check model at path with a drift reference of
// rows standard normal values of each feature, the range theirs.
func wideDrift(path string, rows int) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	d, ok := m["drift"].(map[string]any)
	if !ok {
		return fmt.Errorf("%s has no drift model", path)
	}
	features, _ := d["features"].([]any)
	r := rand.New(rand.NewPCG(7, 8))
	ref := make([][]float64, len(features))
	lo, hi := make([]float64, len(features)), make([]float64, len(features))
	for j := range ref {
		ref[j] = make([]float64, rows)
		lo[j], hi[j] = math.Inf(1), math.Inf(-1)
		for i := range ref[j] {
			v := math.Round(r.NormFloat64()*1000) / 1000
			ref[j][i] = v
			lo[j], hi[j] = min(lo[j], v), max(hi[j], v)
		}
	}
	d["reference"], d["min"], d["max"] = ref, lo, hi
	if b, err = json.Marshal(m); err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}

// answers writes prompts rows of n samples of about size bytes of words.
func answers(path string, prompts, n, size int, r *rand.Rand) error {
	words := strings.Fields("the a of river mountain city blue green seven quickly answer question because which")
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	for p := range prompts {
		var samples []string
		for range n {
			var s strings.Builder
			for s.Len() < size {
				s.WriteString(words[r.IntN(len(words))])
				s.WriteByte(' ')
			}
			samples = append(samples, s.String())
		}
		if err := enc.Encode(map[string]any{"id": fmt.Sprint("p", p), "prompt": "q", "samples": samples}); err != nil {
			return err
		}
	}
	return os.WriteFile(path, b.Bytes(), 0o644)
}

// wideNPZ writes a deflated .npz holding the members of base (an .npz's
// bytes, or none) and a vector vec and a symmetric matrix mat of wide
// dimensions, streamed: a nonzero value in about one of 67 entries
// deflates about 45 times, under the readers' bound on compression
// ratios, as real data would not but an attacker's does.
func wideNPZ(path string, base []byte, vec, sym string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	zw := zip.NewWriter(f)
	if base != nil {
		zr, err := zip.NewReader(bytes.NewReader(base), int64(len(base)))
		if err != nil {
			return err
		}
		for _, m := range zr.File {
			if m.Name == vec+".npy" || m.Name == sym+".npy" {
				continue
			}
			w, err := zw.CreateHeader(&zip.FileHeader{Name: m.Name, Method: zip.Deflate})
			if err != nil {
				return err
			}
			rc, err := m.Open()
			if err != nil {
				return err
			}
			_, err = io.Copy(w, rc)
			rc.Close()
			if err != nil {
				return err
			}
		}
	}
	w, err := zw.CreateHeader(&zip.FileHeader{Name: vec + ".npy", Method: zip.Deflate})
	if err != nil {
		return err
	}
	w.Write(npyHeader("<f8", fmt.Sprintf("(%d,)", wide)))
	w.Write(make([]byte, 8*wide))
	w, err = zw.CreateHeader(&zip.FileHeader{Name: sym + ".npy", Method: zip.Deflate})
	if err != nil {
		return err
	}
	w.Write(npyHeader("<f8", fmt.Sprintf("(%d, %d)", wide, wide)))
	bw := bufio.NewWriterSize(w, 1<<20)
	var cell [8]byte
	for i := range wide {
		for j := range wide {
			v := 0.0
			switch {
			case i == j:
				v = 1
			case (i+j)%67 == 0:
				// The same value at (i, j) and (j, i).
				lo, hi := uint64(min(i, j)), uint64(max(i, j))
				v = 1e-3 * float64((lo*2654435761+hi*40503)%1000003) / 1000003
			}
			binary.LittleEndian.PutUint64(cell[:], math.Float64bits(v))
			bw.Write(cell[:])
		}
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	return zw.Close()
}

// npyHeader is the header of a .npy of descr and shape, C order.
func npyHeader(descr, shape string) []byte {
	h := fmt.Sprintf("{'descr': '%s', 'fortran_order': False, 'shape': %s, }", descr, shape)
	h += strings.Repeat(" ", 63-(10+len(h))%64) + "\n"
	var b bytes.Buffer
	b.WriteString("\x93NUMPY\x01\x00")
	binary.Write(&b, binary.LittleEndian, uint16(len(h)))
	b.WriteString(h)
	return b.Bytes()
}

// upstream serves /v1/chat/completions, answering each of the n choices
// asked for with 30 MB of two-letter words; /one/v1 one such choice
// whatever n asks; /logprobs/v1 n honest choices of max_tokens tokens,
// each with its logprob and top_logprobs alternatives in OpenAI's shape
// (about 1.3 KB a token at 20); /hang/v1 never answers.
func upstream(addr string) error {
	answer := strings.Repeat("ab ", 10<<20)
	choices := func(w http.ResponseWriter, n int) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"id":"x","object":"chat.completion","model":"m","choices":[`)
		for i := range n {
			if i > 0 {
				fmt.Fprint(w, ",")
			}
			fmt.Fprintf(w, `{"index":%d,"finish_reason":"stop","message":{"role":"assistant","content":"%s"}}`, i, answer)
		}
		fmt.Fprint(w, `]}`)
	}
	type request struct {
		N           int `json:"n"`
		MaxTokens   int `json:"max_tokens"`
		TopLogprobs int `json:"top_logprobs"`
	}
	read := func(r *http.Request) request {
		var req request
		json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&req)
		req.N, req.MaxTokens = max(req.N, 1), min(max(req.MaxTokens, 1), 1<<14)
		return req
	}
	http.HandleFunc("POST /v1/chat/completions", func(w http.ResponseWriter, r *http.Request) { choices(w, read(r).N) })
	http.HandleFunc("POST /one/v1/chat/completions", func(w http.ResponseWriter, r *http.Request) { choices(w, 1) })
	http.HandleFunc("POST /hang/v1/chat/completions", func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
	http.HandleFunc("POST /logprobs/v1/chat/completions", func(w http.ResponseWriter, r *http.Request) {
		req := read(r)
		entry := func(tok string, lp float64) string {
			var b strings.Builder
			for i := range len(tok) {
				if i > 0 {
					b.WriteByte(',')
				}
				fmt.Fprint(&b, int(tok[i]))
			}
			return fmt.Sprintf(`"token":%q,"logprob":%v,"bytes":[%s]`, tok, lp, b.String())
		}
		var top strings.Builder
		for k := range req.TopLogprobs {
			if k > 0 {
				top.WriteByte(',')
			}
			top.WriteString("{" + entry(fmt.Sprintf(" alt%02d", k), -1.2345678-float64(k)) + "}")
		}
		w.Header().Set("Content-Type", "application/json")
		bw := bufio.NewWriter(w)
		fmt.Fprint(bw, `{"id":"x","object":"chat.completion","model":"m","choices":[`)
		for c := range req.N {
			if c > 0 {
				bw.WriteByte(',')
			}
			fmt.Fprintf(bw, `{"index":%d,"finish_reason":"length","message":{"role":"assistant","content":%q},"logprobs":{"content":[`, c, strings.Repeat(" word", req.MaxTokens))
			for i := range req.MaxTokens {
				if i > 0 {
					bw.WriteByte(',')
				}
				fmt.Fprintf(bw, `{%s,"top_logprobs":[%s]}`, entry(" word", -0.31725305), top.String())
			}
			fmt.Fprint(bw, `]}}`)
		}
		fmt.Fprintf(bw, `],"usage":{"prompt_tokens":3,"completion_tokens":%d,"total_tokens":%d}}`, req.N*req.MaxTokens, 3+req.N*req.MaxTokens)
		bw.Flush()
	})
	return http.ListenAndServe(addr, nil)
}
