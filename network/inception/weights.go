package inception

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"

	"github.com/genlens/genlens/dataio"
	"github.com/genlens/genlens/fault"
	"github.com/genlens/genlens/internal/fields"
	"github.com/genlens/genlens/internal/hub"
	"github.com/genlens/genlens/network/features"
)

const (
	// WeightsURL is where pytorch-fid downloads the FID Inception weights
	// (the 2015-12-05 TensorFlow graph converted to a PyTorch state dict).
	WeightsURL = "https://github.com/mseitzer/pytorch-fid/releases/download/fid_weights/pt_inception-2015-12-05-6726825d.pth"
	// WeightsFile is the file's name, also its name in the cache.
	WeightsFile = "pt_inception-2015-12-05-6726825d.pth"
	// WeightsEnv names the environment variable that points at the file.
	WeightsEnv = "GENLENS_WEIGHTS"
)

// FetchOptions controls ResolveWeights. The zero value resolves as the
// CLI does: the real URL, the user cache directory, no progress report.
type FetchOptions struct {
	URL      string       // download source; "" means WeightsURL
	CacheDir string       // "" means features.CacheDir(): $GENLENS_CACHE, else os.UserCacheDir()/genlens
	Client   *http.Client // nil means http.DefaultClient
	// HashPrefix is the hex prefix the file's SHA-256 must start with;
	// "" means the real file's whole SHA-256 (OfficialWeightsSHA256,
	// which starts with the 6726825d of its name). Set it together with URL to
	// fetch another file (a mirror of a converted variant, a test server).
	HashPrefix string
	// Progress, when set, is called as the download advances with the
	// bytes received so far and the total (-1 when the server does not
	// say).
	Progress func(done, total int64)
}

// ResolveWeights returns the path of the FID Inception weights, trying in
// order: explicit (the --weights flag), $GENLENS_WEIGHTS, the cached copy
// in genlens's cache directory (features.CacheDir), and finally a download from
// pytorch-fid's release, checked against the file's published SHA-256
// and stored atomically in the cache so later runs find it. An explicit
// path or variable that names no file is an error, never a reason to
// download something else.
func ResolveWeights(ctx context.Context, explicit string, opt FetchOptions) (string, error) {
	if explicit != "" {
		return existing(explicit, "")
	}
	if env := os.Getenv(WeightsEnv); env != "" {
		return existing(env, WeightsEnv)
	}
	dir := opt.CacheDir
	if dir == "" {
		var err error
		if dir, err = features.CacheDir(); err != nil {
			return "", fields.Errorf("inception: %v for the weights; pass {weights} PATH or set %s (file: %s)", err, WeightsEnv, WeightsURL)
		}
	}
	path := filepath.Join(dir, WeightsFile)
	if st, err := os.Stat(path); err == nil && st.Mode().IsRegular() {
		return path, nil
	}
	if err := Download(ctx, path, opt); err != nil {
		return "", err
	}
	return path, nil
}

// existing checks a user-given weights path.
func existing(path, from string) (string, error) {
	st, err := os.Stat(path)
	if err == nil && st.Mode().IsRegular() {
		return path, nil
	}
	msg := "weights file not found"
	if err == nil {
		msg = "weights path is not a regular file"
	} else if !errors.Is(err, os.ErrNotExist) {
		msg = "cannot read weights file: " + dataio.Cause(err)
	}
	if from != "" {
		msg += " (from $" + from + ")"
	}
	return "", &fault.InputError{File: path, Msg: msg, Err: err}
}

// Download fetches the weights to path through package hub's download
// (hub.Download): into a partial file beside path, resumed on the next
// attempt if cut off, checked against the SHA-256 (prefix), and renamed
// into place only when everything matched, so that an interrupted or
// corrupted download never leaves a file that a later run would trust.
func Download(ctx context.Context, path string, opt FetchOptions) error {
	url := opt.URL
	if url == "" {
		url = WeightsURL
	}
	prefix := opt.HashPrefix
	if prefix == "" {
		// The whole SHA-256 of the published file, not only the 8 hex
		// digits its name carries (all torch.hub's check_hash compares).
		prefix = OfficialWeightsSHA256
	}
	hopt := hub.Options{Client: opt.Client}
	if opt.Progress != nil {
		hopt.Progress = func(_ string, done, total int64) { opt.Progress(done, total) }
	}
	err := hub.Download(ctx, url, path, prefix, hopt)
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	byHand := fmt.Sprintf("download %s by hand and put it at %s (or pass {weights} PATH, or set %s)", url, path, WeightsEnv)
	return fields.Errorf("inception: the Inception weights: %v; %s", err, byHand)
}
