package server

// Uploads, the inputs of jobs and selections:
//
//	POST /api/v1/files        multipart/form-data with one part named "file"
//	                          → 201 {"id", "name", "size", "sha256"}
//	GET  /api/v1/files/{id}   the upload's record
//
// A request names an upload by its id, a content id (see jobrun): the
// bytes are streamed to a temporary file under the data directory,
// hashed, synced and renamed into place, never held in memory whole and
// never visible half-written.

import (
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"time"

	"github.com/genlens/genlens/fault"
	"github.com/genlens/genlens/internal/service/jobrun"
	"github.com/genlens/genlens/internal/store/records"
)

// multipartSlack is what the multipart framing around the file may add to
// the body: boundaries and part headers.
const multipartSlack = 64 << 10

func (s *Server) routeFiles(mux *http.ServeMux) {
	mux.HandleFunc("POST /api/v1/files", s.uploadFile)
	mux.HandleFunc("GET /api/v1/files/{id}", s.getFile)
}

type uploadJSON struct {
	ID      string    `json:"id"`
	Name    string    `json:"name"`
	Size    int64     `json:"size"`
	SHA256  string    `json:"sha256"`
	Created time.Time `json:"created"`
}

func toUploadJSON(u records.Upload) uploadJSON {
	return uploadJSON{ID: u.ID, Name: u.Name, Size: u.Size, SHA256: u.SHA256, Created: u.Created.UTC()}
}

// multipartUpload checks that r carries a multipart/form-data body within
// the upload limit and returns its reader; what and example name the
// expected file in the error ("the file", "features.npy"). On false it has
// answered the request.
func (s *Server) multipartUpload(w http.ResponseWriter, r *http.Request, what, example string) (*multipart.Reader, bool) {
	limit := s.jobs.svc.MaxUploadBytes()
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "multipart/form-data" {
		s.writeError(w, r, fault.Fieldf("file", "want a multipart/form-data body with %s in a part named {file} (curl -F file=@%s)", what, example))
		return nil, false
	}
	if r.ContentLength > limit+multipartSlack {
		s.writeError(w, r, errStatus(http.StatusRequestEntityTooLarge, "upload over %d bytes", limit))
		return nil, false
	}
	r.Body = http.MaxBytesReader(w, r.Body, limit+multipartSlack)
	mr, err := r.MultipartReader()
	if err != nil {
		s.writeError(w, r, fault.Fieldf("file", "multipart body: %v", err))
		return nil, false
	}
	return mr, true
}

func (s *Server) uploadFile(w http.ResponseWriter, r *http.Request) {
	mr, ok := s.multipartUpload(w, r, "the file", "features.npy")
	if !ok {
		return
	}
	limit := s.jobs.svc.MaxUploadBytes()
	var up *records.Upload
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			s.uploadError(w, r, err, limit)
			return
		}
		if part.FormName() != "file" {
			part.Close()
			s.writeError(w, r, fault.Fieldf(part.FormName(), "multipart part %q: only one part, named {file}, is read", part.FormName()))
			return
		}
		if up != nil {
			part.Close()
			s.writeError(w, r, fault.Fieldf("file", "one file per request; post each file on its own"))
			return
		}
		if part.FileName() == "" {
			part.Close()
			s.writeError(w, r, fault.Fieldf("file", "the {file} part has no file name (its extension gives the format)"))
			return
		}
		u, err := s.jobs.svc.SaveUpload(r.Context(), part.FileName(), part)
		part.Close()
		if err != nil {
			s.uploadError(w, r, err, limit)
			return
		}
		up = &u
	}
	if up == nil {
		s.writeError(w, r, fault.Fieldf("file", "no {file} part in the body"))
		return
	}
	w.Header().Set("Location", "/api/v1/files/"+up.ID)
	s.writeJSON(w, http.StatusCreated, toUploadJSON(*up))
}

// uploadError reports a failed upload: over the limit is 413 whichever
// reader noticed first.
func (s *Server) uploadError(w http.ResponseWriter, r *http.Request, err error, limit int64) {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) || errors.Is(err, jobrun.ErrTooLarge) {
		s.writeError(w, r, errStatus(http.StatusRequestEntityTooLarge, "upload over %d bytes", limit))
		return
	}
	s.jobError(w, r, err)
}

func (s *Server) getFile(w http.ResponseWriter, r *http.Request) {
	u, err := s.jobs.svc.Upload(r.Context(), r.PathValue("id"))
	if err != nil {
		s.jobError(w, r, err)
		return
	}
	s.writeJSON(w, http.StatusOK, toUploadJSON(u))
}
