package hubtest

import (
	"bytes"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Repo is one repository the hub serves at main and at Commit.
type Repo struct {
	ID     string // org/name
	Commit string // 40 hex digits
	Files  map[string][]byte
	// LFS names the files served as large ones, by redirect.
	LFS map[string]bool
	// Etag overrides the X-Linked-Etag of a large file (a corrupted
	// upload: bytes that are not their announced hash).
	Etag map[string]string
}

// Hub is an http.Handler serving Repos; Requests logs what it was
// asked ("HEAD /org/name/resolve/main/config.json").
type Hub struct {
	Repos []*Repo
	mu    sync.Mutex
	log   []string
}

// SHA256 is the hex SHA-256 of b.
func SHA256(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }

// Requests returns the requests served so far, as "METHOD path range".
func (h *Hub) Requests() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.log...)
}

func (h *Hub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.mu.Lock()
	h.log = append(h.log, strings.TrimSpace(r.Method+" "+r.URL.Path+" "+r.Header.Get("Range")))
	h.mu.Unlock()
	if rest, ok := strings.CutPrefix(r.URL.Path, "/cdn/"); ok {
		for _, repo := range h.Repos {
			if name, ok := strings.CutPrefix(rest, repo.ID+"/"); ok {
				if b, ok := repo.Files[name]; ok {
					http.ServeContent(w, r, name, time.Time{}, bytes.NewReader(b))
					return
				}
			}
		}
		http.NotFound(w, r)
		return
	}
	for _, repo := range h.Repos {
		rest, ok := strings.CutPrefix(r.URL.Path, "/"+repo.ID+"/resolve/")
		if !ok {
			continue
		}
		rev, name, _ := strings.Cut(rest, "/")
		b, found := repo.Files[name]
		if (rev != "main" && rev != repo.Commit) || !found {
			break
		}
		w.Header().Set("X-Repo-Commit", repo.Commit)
		if repo.LFS[name] {
			etag := SHA256(b)
			if e, ok := repo.Etag[name]; ok {
				etag = e
			}
			w.Header().Set("X-Linked-Etag", `"`+etag+`"`)
			w.Header().Set("X-Linked-Size", strconv.Itoa(len(b)))
			w.Header().Set("Location", "/cdn/"+repo.ID+"/"+name)
			w.WriteHeader(http.StatusFound)
			return
		}
		g := sha1.Sum(b)
		w.Header().Set("ETag", `"`+hex.EncodeToString(g[:])+`"`)
		http.ServeContent(w, r, name, time.Time{}, bytes.NewReader(b))
		return
	}
	w.Header().Set("X-Error-Code", "EntryNotFound")
	http.NotFound(w, r)
}
