package reprjob

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strings"

	"github.com/genlens/genlens/dataio"
	"github.com/genlens/genlens/fault"
	"github.com/genlens/genlens/job"
	"github.com/genlens/genlens/job/internal/textembed"
	"github.com/genlens/genlens/network/bert"
	"github.com/genlens/genlens/network/features"
)

// EmbedRequest is a request of `genlens embed`: one vector per text of a
// file, by a BERT sentence embedder run in process. Weights is the
// model's directory: one of the host on the command line; in the
// service, the name of a directory its operator allowed (see
// job.Command.ModelDirs), as for entropy's and sample's embedder.
type EmbedRequest struct {
	In       string `json:"in" help:"texts: a .txt (a text a line) or a .jsonl"`
	Field    string `json:"field" help:"the field of the texts in a .jsonl row"`
	Embedder string `json:"embedder"` // bert.Names
	Weights  string `json:"weights"`  // the model's directory
	// Prefix is query, passage or none: the model card's prefix put
	// before every text (e5's "query: ", "passage: "); "" is query for a
	// model that has prefixes.
	Prefix string `json:"prefix,omitempty" help:"query, passage or none: the model card's prefix before every text (e5: \"query: \", \"passage: \"); query by default"`
	// NoCache skips the feature cache.
	NoCache bool `json:"no_cache,omitempty" help:"neither read nor write the feature cache"`
}

// NewEmbedRequest returns a request with the command line's defaults.
func NewEmbedRequest() EmbedRequest { return EmbedRequest{Field: "text"} }

// EmbedResult is the vectors and how they were made.
type EmbedResult struct {
	Texts         int    `json:"texts"`
	Dim           int    `json:"dim"`
	Embedder      string `json:"embedder"`
	Prefix        string `json:"prefix"`
	WeightsSHA256 string `json:"weights_sha256"`
	CacheHits     int    `json:"cache_hits"`
	// Embeddings are the vectors, a row per text, for the .npy.
	Embeddings [][]float32 `json:"-"`
	// Path is the file the transport wrote the vectors to, for the text.
	Path string `json:"-"`
}

// Artifacts returns embeddings.npy: the vectors, texts × dim, float64.
func (r *EmbedResult) Artifacts() []job.Artifact {
	return []job.Artifact{{Name: "embeddings.npy", Write: r.WriteNPY}}
}

// WriteNPY writes the vectors as a float64 .npy array (texts × dim), a
// row per text in the order of the input.
func (r *EmbedResult) WriteNPY(w io.Writer) error {
	arr := &dataio.Array{Shape: []int{r.Texts, r.Dim}, Data: make([]float64, 0, r.Texts*r.Dim)}
	for _, v := range r.Embeddings {
		for _, x := range v {
			arr.Data = append(arr.Data, float64(x))
		}
	}
	return dataio.EncodeNPY(w, arr)
}

// Validate checks the fields that need no input file.
func (r *EmbedRequest) Validate() error {
	switch {
	case r.In == "":
		return fault.Fieldf("in", "embed: {in} FILE is required")
	case strings.HasSuffix(strings.ToLower(r.In), ".gz"):
		// The texts are read line by line, not through dataio's
		// decompressing readers (the service takes .jsonl.gz uploads).
		return fault.Fieldf("in", "embed: {in} %s: a compressed file; give the .txt or .jsonl uncompressed", r.In)
	case r.Embedder == "":
		return fault.Fieldf("embedder", "embed: {embedder} NAME is required: one of %s", strings.Join(bert.Names(), ", "))
	case r.Field == "" && strings.HasSuffix(r.In, ".jsonl"):
		return fault.Fieldf("field", "{field}: name the field of the texts in %s", r.In)
	}
	if err := textembed.CheckPrefix(r.Embedder, r.Prefix); err != nil {
		return err
	}
	return textembed.Check(r.Embedder, r.Weights, "")
}

// maxTexts bounds the texts of one file.
const maxTexts = 1 << 22

// readTexts reads a .txt (a text a line, the trailing newline not a
// text) or a .jsonl (the string field of every non-blank row).
func readTexts(fsys fs.FS, name, field string) ([]string, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return nil, &fault.InputError{File: name, Msg: dataio.Cause(err), Err: err}
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	jsonl := path.Ext(name) == ".jsonl"
	var out []string
	for line := 1; sc.Scan(); line++ {
		if len(out) >= maxTexts {
			return nil, &fault.InputError{File: name, Line: line, Msg: fmt.Sprintf("more than %d texts", maxTexts)}
		}
		if !jsonl {
			out = append(out, sc.Text())
			continue
		}
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var row map[string]json.RawMessage
		if err := json.Unmarshal(sc.Bytes(), &row); err != nil {
			return nil, &fault.InputError{File: name, Line: line, Msg: "not a JSON object"}
		}
		raw, ok := row[field]
		var s string
		if !ok || json.Unmarshal(raw, &s) != nil {
			return nil, &fault.InputError{File: name, Line: line, Field: field, Msg: "missing or not a string"}
		}
		out = append(out, s)
	}
	if err := sc.Err(); err != nil {
		return nil, &fault.InputError{File: name, Msg: "cannot read: " + err.Error()}
	}
	return out, nil
}

// Embed runs `genlens embed`: it reads the texts, takes what the feature
// cache has (keyed by the embedder, its prefix, weights and the text) and
// embeds the rest in batches, reporting the texts done through
// env.Progress.
func Embed(ctx context.Context, env job.Env, req EmbedRequest) (*EmbedResult, error) {
	if err := req.Validate(); err != nil {
		return nil, err
	}
	texts, err := readTexts(env.InputFS(), req.In, req.Field)
	if err != nil {
		return nil, err
	}
	prefix := textembed.Prefix(req.Embedder, req.Prefix)
	e, err := textembed.LoadPrefix(ctx, env, req.Embedder, req.Weights, prefix)
	if err != nil {
		return nil, err
	}
	set := e.Settings()
	var cache *features.Cache
	if !req.NoCache {
		if dir, err := features.CacheDir(); err == nil {
			cache = features.OpenCache(dir, set)
		}
	}
	res := &EmbedResult{Texts: len(texts), Dim: set.Dim, Embedder: set.Embedder, Prefix: prefix, WeightsSHA256: set.WeightsSHA256,
		Embeddings: make([][]float32, len(texts))}
	key := func(s string) string { h := sha256.Sum256([]byte(s)); return hex.EncodeToString(h[:]) }
	var todo []int
	for i, s := range texts {
		if cache != nil {
			if v, ok := cache.Get(key(s)); ok {
				res.Embeddings[i] = v
				res.CacheHits++
				continue
			}
		}
		todo = append(todo, i)
	}
	done := res.CacheHits
	if env.Progress != nil {
		env.Progress(done, len(texts))
	}
	for b := 0; b < len(todo); b += textembed.Batch {
		idx := todo[b:min(len(todo), b+textembed.Batch)]
		batch := make([]string, len(idx))
		for j, i := range idx {
			batch[j] = texts[i]
		}
		v, err := e.Forward(ctx, batch)
		if err != nil {
			return nil, err
		}
		for j, i := range idx {
			res.Embeddings[i] = v[j]
			if cache != nil {
				// A cache that cannot be written costs speed, not results.
				_ = cache.Put(key(texts[i]), v[j])
			}
		}
		done += len(idx)
		if env.Progress != nil {
			env.Progress(done, len(texts))
		}
	}
	return res, nil
}

func embedText(w io.Writer, _ *EmbedRequest, r *EmbedResult) {
	fmt.Fprintf(w, "embedded %d texts (%d from the cache) with %s, prefix %q: %d×%d float64 in %s\nweights sha256 %s\n",
		r.Texts, r.CacheHits, r.Embedder, r.Prefix, r.Texts, r.Dim, r.Path, r.WeightsSHA256)
}
