package jobrun

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/genlens/genlens/fault"
	"github.com/genlens/genlens/internal/store/records"
)

// Uploads are the inputs of jobs. Each is stored once under
// DataDir/uploads by its content id, the first 128 bits of the SHA-256 of
// its bytes in hex followed by its extension ("<32 hex>.npy",
// "<32 hex>.csv.gz"): readers choose the format by extension, and the
// same bytes uploaded twice are one file. (128 bits keep collisions out of
// reach, 2^64 files even for a birthday attack, and keep ids short enough
// to label a chart: results name their inputs by the path given.) Requests name uploads by id; a job's file system holds
// nothing else, so a request can never reach outside the data directory.

// uploadExts are the extensions an upload may have: the formats genlens
// reads, optionally gzipped where the reader decompresses them.
var uploadExts = map[string]bool{
	".npy": true, ".npz": true, ".csv": true, ".parquet": true,
	".json": true, ".jsonl": true, ".txt": true,
	".zip": true, // a folder of images
	// Weights of an image network: Inception's .pth; a DINOv2 or CLIP
	// state dict, OpenAI's TorchScript CLIP, a safetensors file.
	".pth": true, ".pt": true, ".safetensors": true,
	".npy.gz": true, ".csv.gz": true, ".jsonl.gz": true,
}

var uploadID = regexp.MustCompile(`^[0-9a-f]{32}(\.[a-z]+){1,2}$`)

// ErrTooLarge is returned by SaveUpload for a file over the limit (HTTP
// 413).
var ErrTooLarge = errors.New("upload too large")

// MaxUploadBytes is the limit of one upload.
func (s *Service) MaxUploadBytes() int64 { return s.cfg.MaxUploadBytes }

// uploadExt returns the lower-case extension of a client's file name,
// double for ".gz" ones.
func uploadExt(name string) string {
	base := strings.ToLower(filepath.Base(strings.ReplaceAll(name, `\`, "/")))
	ext := filepath.Ext(base)
	if ext == ".gz" {
		ext = filepath.Ext(strings.TrimSuffix(base, ".gz")) + ".gz"
	}
	return ext
}

// SaveUpload stores the bytes of r under their content id and records the
// upload. name is the client's file name: only its extension matters,
// and it must be one genlens reads. More than MaxUploadBytes is
// ErrTooLarge; nothing partial is ever visible: the bytes go to a
// temporary file that is synced and renamed into place.
// The answer carries name even when the same bytes were uploaded before
// under another one (they share the id; GET returns the first name).
func (s *Service) SaveUpload(ctx context.Context, name string, r io.Reader) (records.Upload, error) {
	ext := uploadExt(name)
	if !uploadExts[ext] {
		return records.Upload{}, fault.Fieldf("file", "{file} %q: unknown file type %q; want one of .npy, .npz, .csv, .parquet, .json, .jsonl, .txt, .zip, .pth, .pt, .safetensors (.npy, .csv and .jsonl may be gzipped)", name, ext)
	}
	dir := filepath.Join(s.cfg.DataDir, "uploads")
	tmp, err := os.CreateTemp(dir, ".upload-*")
	if err != nil {
		return records.Upload{}, err
	}
	committed := false
	defer func() {
		if !committed {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(tmp, h), io.LimitReader(r, s.cfg.MaxUploadBytes+1))
	if err != nil {
		return records.Upload{}, fmt.Errorf("receiving %s: %w", name, err)
	}
	if n > s.cfg.MaxUploadBytes {
		return records.Upload{}, fmt.Errorf("%w: %s is over %d bytes", ErrTooLarge, name, s.cfg.MaxUploadBytes)
	}
	if err := tmp.Sync(); err != nil {
		return records.Upload{}, err
	}
	if err := tmp.Close(); err != nil {
		return records.Upload{}, err
	}
	sum := hex.EncodeToString(h.Sum(nil))
	id := sum[:32] + ext
	final := filepath.Join(dir, id)
	// Renamed even when the same bytes are there already: the fresh
	// modification time keeps a retention sweep from removing the file
	// while its record is being written again (see Sweep), and a file
	// such a sweep removed comes back.
	if err := os.Rename(tmp.Name(), final); err != nil {
		return records.Upload{}, err
	}
	committed = true
	if d, err := os.Open(dir); err == nil { // make the rename durable
		d.Sync()
		d.Close()
	}
	u := records.Upload{ID: id, Name: filepath.Base(strings.ReplaceAll(name, `\`, "/")), Size: n, SHA256: sum, Created: s.now()}
	if err := s.store.PutUpload(ctx, u); err != nil {
		return records.Upload{}, fmt.Errorf("recording the upload: %w", err)
	}
	got, err := s.store.GetUpload(ctx, id)
	// The id names the content: the same bytes uploaded under another
	// name share it (and the record keeps the first name), but the
	// client is answered with the name it gave, which is what it knows
	// the file by.
	got.Name = u.Name
	return got, err
}

// removeStaleTemps removes the temporary files of uploads that a crash
// interrupted more than a day ago (younger ones may be another replica's
// uploads in progress on a shared data directory).
func removeStaleTemps(dir string, logf func(string, ...any)) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), ".upload-") {
			continue
		}
		if info, err := e.Info(); err == nil && time.Since(info.ModTime()) > 24*time.Hour {
			if os.Remove(filepath.Join(dir, e.Name())) == nil {
				logf("jobrun: removed %s, an upload interrupted on %s", e.Name(), info.ModTime().Format(time.RFC3339))
			}
		}
	}
}

// Upload returns an upload's record.
func (s *Service) Upload(ctx context.Context, id string) (records.Upload, error) {
	if !uploadID.MatchString(id) {
		return records.Upload{}, records.ErrNotFound
	}
	return s.store.GetUpload(ctx, id)
}

// checkUpload checks that a request field names a stored upload whose
// file is in the data directory.
func (s *Service) checkUpload(ctx context.Context, field, id string) error {
	if !uploadID.MatchString(id) {
		return fault.Fieldf(field, "{%s} %q is not an upload id: upload the file with POST /api/v1/files and pass the id it returns", field, id)
	}
	if _, err := s.store.GetUpload(ctx, id); err != nil {
		if errors.Is(err, records.ErrNotFound) {
			return fault.Fieldf(field, "{%s}: no upload with id %s", field, id)
		}
		return err
	}
	if _, err := s.uploads.Stat(id); err != nil {
		return fault.Fieldf(field, "{%s}: upload %s is recorded but its file is missing from this server's data directory", field, id)
	}
	return nil
}
