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
//	DELETE /api/v1/stats/{name}      204: the name and all its parts removed (the repair of a
//	                                 name whose parts cannot be merged); 404 for an unknown name
//
// The parts and their merge are package statsvc's; this file speaks
// HTTP in front of it.

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strconv"

	"github.com/genlens/genlens/fault"
	"github.com/genlens/genlens/internal/service/statsvc"
	"github.com/genlens/genlens/metric/frechet"
)

func (s *Server) routeStats(mux *http.ServeMux) {
	mux.HandleFunc("POST /api/v1/stats/{name}/parts", s.postStatsPart)
	mux.HandleFunc("GET /api/v1/stats/{name}", s.getStats)
	mux.HandleFunc("DELETE /api/v1/stats/{name}", s.deleteStats)
}

func (s *Server) deleteStats(w http.ResponseWriter, r *http.Request) {
	name, err := pathStatsName(r)
	if err == nil {
		err = s.stats.Delete(r.Context(), name)
	}
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func pathStatsName(r *http.Request) (string, error) {
	name := r.PathValue("name")
	return name, statsvc.CheckName(name)
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
			s.writeError(w, r, fault.Fieldf(part.FormName(), "multipart part %q: only one part, named {file}, is read", part.FormName()))
			return
		}
		if data != nil {
			part.Close()
			s.writeError(w, r, fault.Fieldf("file", "one part file per request; post each on its own"))
			return
		}
		fname = part.FileName()
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
		s.writeError(w, r, fault.Fieldf("file", "no {file} part in the body"))
		return
	}
	added, err := s.stats.Put(r.Context(), name, fname, data)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	p := added.Part
	status := http.StatusCreated
	if added.Duplicate {
		status = http.StatusOK
	}
	s.writeJSON(w, status, statsPartJSON{Name: name, Shard: p.Shard, Shards: p.Shards, N: p.N, Duplicate: added.Duplicate,
		Have: len(added.Set.Have), Complete: len(added.Missing) == 0, Missing: added.Missing})
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
		s.writeError(w, r, fault.Fieldf("format", "{format} %q: want json or npz", format))
		return
	}
	set, missing, err := s.stats.Set(r.Context(), name)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if format == "npz" && len(missing) > 0 && r.URL.Query().Get("allow_missing") != "true" {
		s.writeError(w, r, errStatus(http.StatusConflict, "statistics %q: %d of %d shards missing (%v); add allow_missing=true for the statistics of the parts held", name, len(missing), set.Shards, missing))
		return
	}
	m, err := s.stats.Merge(r.Context(), name)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	// The set as merged: a part may have come since Set.
	set, missing, acc, prov, dim := m.Set, m.Missing, m.Acc, m.Prov, m.Dim
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
