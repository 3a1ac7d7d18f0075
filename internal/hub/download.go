package hub

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	neturl "net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// Options control fetching. The zero value fetches as the command line
// does: http.DefaultClient, no progress report, the network allowed
// unless HF_HUB_OFFLINE is set.
type Options struct {
	Client *http.Client // nil means http.DefaultClient
	// Progress, when set, is called as a download advances with its URL,
	// the bytes held so far (a resumed download starts from its partial
	// file) and the total (-1 when the server does not say).
	Progress func(url string, done, total int64)
	// Offline, when not empty, keeps Fetch and Snapshot off the network
	// and says why, for the error about a file not in the cache ("this
	// server downloads no models"). HF_HUB_OFFLINE=1 has the same effect.
	Offline string
}

// OfflineEnv is the Hugging Face hub's variable that forbids the
// network; this package honours it for every source.
const OfflineEnv = "HF_HUB_OFFLINE"

// offline returns why the network may not be used, "" when it may.
func (o *Options) offline() string {
	if o.Offline != "" {
		return o.Offline
	}
	switch strings.ToLower(os.Getenv(OfflineEnv)) {
	case "1", "true", "yes", "on":
		return "$" + OfflineEnv + " is set"
	}
	return ""
}

func (o *Options) client() *http.Client {
	if o.Client != nil {
		return o.Client
	}
	return http.DefaultClient
}

// Incomplete is the suffix of a download in progress, beside its final
// name (the Hugging Face hub's own, so that either tool resumes the
// other's partial blob).
const Incomplete = ".incomplete"

// HashError is a download whose SHA-256 is not the published one; the
// file is not stored.
type HashError struct {
	URL       string
	Got, Want string // hex; Want may be a prefix
}

func (e *HashError) Error() string {
	return fmt.Sprintf("%s has SHA-256 %s…, want %s…; not stored", e.URL, e.Got[:16], e.Want)
}

// Download fetches url to path. It writes path+Incomplete (continuing
// one already there with a Range request, from where it stopped),
// checks the length the server announced and, when sha256 is not empty,
// that the file's SHA-256 starts with it (hex), and then renames it to
// path. Offline (Options.Offline, HF_HUB_OFFLINE) it downloads nothing
// and says so. A transfer cut off keeps the partial file for the next attempt;
// a file of the wrong hash is removed. Errors name the URL. Downloads
// of one path in one process are serialised; two processes downloading
// one file at once are not (the hash, when known, catches the mix).
func Download(ctx context.Context, url, path, sha256hex string, opt Options) error {
	if why := opt.offline(); why != "" {
		return fmt.Errorf("not downloading %s: %s", url, why)
	}
	// One download of a path at a time in this process (a service's
	// jobs needing one model at once): the others wait and find it.
	mu, _ := downloading.LoadOrStore(path, new(sync.Mutex))
	mu.(*sync.Mutex).Lock()
	defer mu.(*sync.Mutex).Unlock()
	if regular(path) {
		return nil
	}
	return download(ctx, url, path, sha256hex, opt)
}

// downloading holds a mutex per path being downloaded.
var downloading sync.Map

func download(ctx context.Context, url, path, sha256hex string, opt Options) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("cannot create the cache folder: %v", err)
	}
	tmp := path + Incomplete
	var have int64
	if st, err := os.Stat(tmp); err == nil && st.Mode().IsRegular() {
		have = st.Size()
	}
	resp, err := get(ctx, opt.client(), url, have)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var total int64 = -1
	switch {
	case resp.StatusCode == http.StatusPartialContent && have > 0 && rangeStart(resp) == have:
		if resp.ContentLength >= 0 {
			total = have + resp.ContentLength
		}
	case resp.StatusCode == http.StatusOK:
		have, total = 0, resp.ContentLength // the server sends the whole file
	case resp.StatusCode == http.StatusRequestedRangeNotSatisfiable && have > 0:
		// The partial file is not a prefix of this one (longer than it):
		// start over.
		resp.Body.Close()
		if err := os.Remove(tmp); err != nil {
			return fmt.Errorf("cannot restart the download of %s: %v", url, err)
		}
		return download(ctx, url, path, sha256hex, opt)
	default:
		return fmt.Errorf("downloading %s failed: HTTP %s", url, resp.Status)
	}
	flag := os.O_WRONLY | os.O_CREATE
	if have == 0 {
		flag |= os.O_TRUNC
	} else {
		flag |= os.O_APPEND
	}
	f, err := os.OpenFile(tmp, flag, 0o666)
	if err != nil {
		return fmt.Errorf("cannot write %s: %v", tmp, err)
	}
	h := sha256.New()
	if have > 0 {
		// The hash covers the whole file, the part already held too.
		if err := hashFile(h, tmp, have); err != nil {
			f.Close()
			return err
		}
	}
	pw := &progressWriter{url: url, done: have, total: total, report: opt.Progress}
	if pw.report != nil && have > 0 {
		pw.report(url, have, total)
	}
	n, err := io.Copy(io.MultiWriter(f, h, pw), resp.Body)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	got := have + n
	switch {
	case err != nil && ctx.Err() != nil:
		return ctx.Err()
	case err != nil:
		return fmt.Errorf("download of %s cut off after %d bytes (kept to resume): %v", url, got, err)
	case total >= 0 && got != total:
		return fmt.Errorf("download of %s cut off after %d of %d bytes (kept to resume)", url, got, total)
	}
	if sum := hex.EncodeToString(h.Sum(nil)); sha256hex != "" && !strings.HasPrefix(sum, strings.ToLower(sha256hex)) {
		os.Remove(tmp)
		return &HashError{URL: url, Got: sum, Want: sha256hex}
	}
	if err := syncFile(tmp); err != nil {
		return fmt.Errorf("cannot store %s: %v", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("cannot store %s: %v", path, err)
	}
	return nil
}

// get sends GET url, asking for the bytes from offset on when offset > 0.
func get(ctx context.Context, c *http.Client, url string, offset int64) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, fmt.Errorf("bad URL %q: %v", url, err)
	}
	if offset > 0 {
		req.Header.Set("Range", "bytes="+strconv.FormatInt(offset, 10)+"-")
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, netError(ctx, url, err)
	}
	return resp, nil
}

// netError says that url could not be reached.
func netError(ctx context.Context, url string, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	// *url.Error repeats the method and URL.
	var ue *neturl.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return fmt.Errorf("cannot download %s (offline?): %v", url, err)
}

// rangeStart returns the first byte of a 206 answer's Content-Range, -1
// when it has none.
func rangeStart(resp *http.Response) int64 {
	cr := resp.Header.Get("Content-Range") // "bytes 100-199/200"
	rest, ok := strings.CutPrefix(cr, "bytes ")
	if !ok {
		return -1
	}
	first, _, _ := strings.Cut(rest, "-")
	n, err := strconv.ParseInt(first, 10, 64)
	if err != nil {
		return -1
	}
	return n
}

// hashFile feeds the first n bytes of path to h.
func hashFile(h io.Writer, path string, n int64) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("cannot resume from %s: %v", path, err)
	}
	defer f.Close()
	if _, err := io.CopyN(h, f, n); err != nil {
		return fmt.Errorf("cannot resume from %s: %v", path, err)
	}
	return nil
}

func syncFile(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// progressWriter counts bytes for the progress callback.
type progressWriter struct {
	url         string
	done, total int64
	report      func(url string, done, total int64)
}

func (p *progressWriter) Write(b []byte) (int, error) {
	p.done += int64(len(b))
	if p.report != nil {
		p.report(p.url, p.done, p.total)
	}
	return len(b), nil
}

// regular reports whether path is a regular file (after symlinks).
func regular(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular()
}
