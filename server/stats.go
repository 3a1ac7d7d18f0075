package server

// Sharded statistics reported by many machines to one place:
//
//	POST /api/v1/stats/{name}/parts  multipart/form-data with one part
//	                                 named "file": a part file of
//	                                 'genlens stats --shards K'
//	                                 → 201 {"name", "shard", "shards", "duplicate": false, "have", "complete", "missing"}
//	                                 → 200 the same with "duplicate": true for a part already held
//	                                 → 409 another part for a shard already held
//	                                 → 422 a part of other inputs, shard count or provenance
//	GET  /api/v1/stats/{name}        {"n", "mu", "sigma", "complete", "missing", ...}
//	GET  /api/v1/stats/{name}?format=npz  the statistics file (mu, sigma, n, provenance);
//	                                 409 while shards are missing, unless allow_missing=true
//
// Parts are kept as posted, one transaction each (store.PutStatsPart),
// and merged when read in shard order through frechet.TreeMerger, so the
// service's statistics are bit for bit those of 'genlens stats merge'.

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"path"
	"regexp"
	"strconv"
	"testing/fstest"

	"genlens/dataio"
	"genlens/frechet"
	"genlens/job"
	"genlens/store"
)

func (s *Server) routeStats(mux *http.ServeMux) {
	mux.HandleFunc("POST /api/v1/stats/{name}/parts", s.postStatsPart)
	mux.HandleFunc("GET /api/v1/stats/{name}", s.getStats)
}

// statsName is what a statistics name may hold: it appears in URLs and
// file names.
var statsName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

func pathStatsName(r *http.Request) (string, error) {
	name := r.PathValue("name")
	if !statsName.MatchString(name) {
		return "", job.Fieldf("name", "statistics name %q: want 1 to 128 letters, digits, '.', '_' or '-', starting with a letter or digit", name)
	}
	return name, nil
}

type statsPartJSON struct {
	Name      string `json:"name"`
	Shard     int    `json:"shard"`
	Shards    int    `json:"shards"`
	N         int    `json:"n"` // rows of this part
	Duplicate bool   `json:"duplicate"`
	Have      int    `json:"have"` // parts held now
	Complete  bool   `json:"complete"`
	Missing   []int  `json:"missing"`
}

// partInput is the description of a part's input and provenance that
// every part of one name must share.
func partInput(p *frechet.Part) string {
	l := p.Listing
	return fmt.Sprintf("%s of %d (cols %d, sha256 %s); %s; dim %d", l.Kind, l.Count, l.Cols, l.SHA256, p.Prov, p.Dim())
}

// memFile is a one-file file system over bytes, for the part readers.
func memFile(name string, b []byte) fs.FS {
	return fstest.MapFS{name: &fstest.MapFile{Data: b}}
}

// partFileName returns a name for the posted file in error messages.
func partFileName(fn string) string {
	b := path.Base(fn)
	if b == "." || b == "/" || !fs.ValidPath(b) || len(b) > 200 {
		return "part.npz"
	}
	return b
}

func (s *Server) postStatsPart(w http.ResponseWriter, r *http.Request) {
	name, err := pathStatsName(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	mr, ok := s.multipartUpload(w, r, "the part file", "part-0.npz")
	if !ok {
		return
	}
	limit := s.jobs.svc.MaxUploadBytes()
	var data []byte
	var fname string
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		if part.FormName() != "file" {
			part.Close()
			s.writeError(w, r, job.Fieldf(part.FormName(), "multipart part %q: only one part, named {file}, is read", part.FormName()))
			return
		}
		if data != nil {
			part.Close()
			s.writeError(w, r, job.Fieldf("file", "one part file per request; post each on its own"))
			return
		}
		fname = partFileName(part.FileName())
		data, err = io.ReadAll(io.LimitReader(part, limit+1))
		part.Close()
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		if int64(len(data)) > limit {
			s.writeError(w, r, errStatus(http.StatusRequestEntityTooLarge, "upload over %d bytes", limit))
			return
		}
	}
	if data == nil {
		s.writeError(w, r, job.Fieldf("file", "no {file} part in the body"))
		return
	}
	// The whole part is read and checked (shapes, symmetry) before it is
	// stored: a broken part must not poison the merge of a name.
	p, err := frechet.ReadPart(memFile(fname, data), fname)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	sum := sha256.Sum256(data)
	dup, err := s.store.PutStatsPart(r.Context(), store.StatsPart{Name: name, Shard: p.Shard, Shards: p.Shards, Input: partInput(p),
		SHA256: hex.EncodeToString(sum[:]), N: p.N, Data: data, Created: s.now()})
	switch {
	case errors.Is(err, store.ErrMismatch):
		s.writeError(w, r, &dataio.InputError{File: fname, Msg: "not a part of statistics " + strconv.Quote(name) + ": " + err.Error(), Err: err})
		return
	case err != nil:
		s.writeError(w, r, err)
		return
	}
	set, err := s.store.GetStatsSet(r.Context(), name)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	missing := missingShards(set)
	status := http.StatusCreated
	if dup {
		status = http.StatusOK
	}
	s.writeJSON(w, status, statsPartJSON{Name: name, Shard: p.Shard, Shards: p.Shards, N: p.N, Duplicate: dup,
		Have: len(set.Have), Complete: len(missing) == 0, Missing: missing})
}

// missingShards lists the shard indices of set without a part.
func missingShards(set store.StatsSet) []int {
	have := map[int]bool{}
	for _, h := range set.Have {
		have[h] = true
	}
	missing := []int{}
	for i := 0; i < set.Shards; i++ {
		if !have[i] {
			missing = append(missing, i)
		}
	}
	return missing
}

type statsJSON struct {
	Name     string      `json:"name"`
	N        int         `json:"n"`
	Dim      int         `json:"dim"`
	Mu       []float64   `json:"mu"`    // null with fewer than 2 rows
	Sigma    [][]float64 `json:"sigma"` // (n − 1) normalised; null with fewer than 2 rows
	Shards   int         `json:"shards"`
	Have     int         `json:"have"`
	Complete bool        `json:"complete"`
	Missing  []int       `json:"missing"`
	Embedder string      `json:"embedder"`
	Mode     string      `json:"mode"`
	Dims     string      `json:"dims"`
	Weights  string      `json:"weights_sha256"`
}

func (s *Server) getStats(w http.ResponseWriter, r *http.Request) {
	name, err := pathStatsName(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	format := r.URL.Query().Get("format")
	if format != "" && format != "json" && format != "npz" {
		s.writeError(w, r, job.Fieldf("format", "{format} %q: want json or npz", format))
		return
	}
	set, err := s.store.GetStatsSet(r.Context(), name)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	missing := missingShards(set)
	if format == "npz" && len(missing) > 0 && r.URL.Query().Get("allow_missing") != "true" {
		s.writeError(w, r, errStatus(http.StatusConflict, "statistics %q: %d of %d shards missing (%v); add allow_missing=true for the statistics of the parts held", name, len(missing), set.Shards, missing))
		return
	}
	var tm frechet.TreeMerger
	var prov frechet.Provenance
	dim := 0
	err = s.store.StatsParts(r.Context(), name, func(sp store.StatsPart) error {
		fname := fmt.Sprintf("part-%d.npz", sp.Shard)
		p, err := frechet.ReadPart(memFile(fname, sp.Data), fname)
		if err != nil {
			return fmt.Errorf("stored part %d of %q: %w", sp.Shard, name, err)
		}
		prov, dim = p.Prov, p.Dim()
		tm.Push(frechet.TakeAccumulator(p))
		return nil
	})
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	acc := tm.Result()
	out := statsJSON{Name: name, Dim: dim, Shards: set.Shards, Have: len(set.Have), Complete: len(missing) == 0, Missing: missing,
		Embedder: prov.Embedder, Mode: prov.Mode, Dims: prov.Dims, Weights: prov.Weights}
	if acc != nil {
		out.N = acc.N()
	}
	if acc == nil || acc.N() < 2 {
		if format == "npz" {
			s.writeError(w, r, errStatus(http.StatusConflict, "statistics %q: %d row(s) held; a covariance needs 2", name, out.N))
			return
		}
		s.writeJSON(w, http.StatusOK, out)
		return
	}
	st := acc.Stats(1)
	if format == "npz" {
		var buf bytes.Buffer
		if err := frechet.EncodeStatsMeta(&buf, st, prov.StatsMeta()); err != nil {
			s.writeError(w, r, err)
			return
		}
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set("Content-Disposition", fmt.Sprintf("attachment; filename=%q", name+".npz"))
		w.Header().Set("Content-Length", strconv.Itoa(buf.Len()))
		w.Write(buf.Bytes())
		return
	}
	out.Mu = st.Mu
	out.Sigma = make([][]float64, dim)
	for i := range out.Sigma {
		out.Sigma[i] = make([]float64, dim)
		for j := range out.Sigma[i] {
			out.Sigma[i][j] = st.Sigma.At(i, j)
		}
	}
	s.writeJSON(w, http.StatusOK, out)
}
