package hub

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	neturl "net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// Want is one file a loader reads from a model folder: the first of
// Names the repository has (config.json; tokenizer.json else vocab.txt);
// Optional when the loader does without any.
type Want struct {
	Names    []string
	Optional bool
}

// BERTFiles are what genlens's BERT loader reads of a model folder
// (package bert): the tokenizer.json a repository has, else its
// vocab.txt (with tokenizer_config.json if any), and model.safetensors,
// else pytorch_model.bin.
var BERTFiles = []Want{
	{Names: []string{"config.json"}},
	{Names: []string{"tokenizer.json", "vocab.txt"}},
	{Names: []string{"tokenizer_config.json"}, Optional: true},
	{Names: []string{"model.safetensors", "pytorch_model.bin"}},
}

// DeBERTaFiles are what genlens's DeBERTa loader reads (package
// deberta): the config, the BPE tokenizer and the weights.
var DeBERTaFiles = []Want{
	{Names: []string{"config.json"}},
	{Names: []string{"vocab.json"}},
	{Names: []string{"merges.txt"}},
	{Names: []string{"model.safetensors", "pytorch_model.bin"}},
}

// HFCache is the Hugging Face hub's cache folder: $HF_HUB_CACHE, else
// $HF_HOME/hub, else $XDG_CACHE_HOME/huggingface/hub, else
// ~/.cache/huggingface/hub.
func HFCache() (string, error) {
	if d := os.Getenv("HF_HUB_CACHE"); d != "" {
		return d, nil
	}
	if d := os.Getenv("HF_HOME"); d != "" {
		return filepath.Join(d, "hub"), nil
	}
	if d := os.Getenv("XDG_CACHE_HOME"); d != "" {
		return filepath.Join(d, "huggingface", "hub"), nil
	}
	return home(".cache", "huggingface", "hub")
}

// HFEndpoint is the hub's address: $HF_ENDPOINT, else
// https://huggingface.co.
func HFEndpoint() string {
	if e := os.Getenv("HF_ENDPOINT"); e != "" {
		return strings.TrimRight(e, "/")
	}
	return "https://huggingface.co"
}

// revision is the branch fetched; refs/main names its commit.
const revision = "main"

// Snapshot returns the folder of repo's main snapshot in the Hugging
// Face cache, holding one file of each of want. A snapshot already
// holding them is used without the network. Otherwise each file missing
// is asked of the hub (HEAD {endpoint}/{repo}/resolve/main/{file}, whose
// X-Repo-Commit, X-Linked-Etag or ETag and X-Linked-Size headers say its
// commit, blob and size), downloaded into blobs/{etag} unless that blob
// is there (a large file's ETag is its SHA-256, checked), and linked
// from snapshots/{commit}/{file}; refs/main is set to the commit.
func Snapshot(ctx context.Context, repo string, want []Want, opt Options) (string, error) {
	if !IsRepoID(repo) {
		return "", fmt.Errorf("%q is not a Hugging Face model id (org/name)", repo)
	}
	cache, err := HFCache()
	if err != nil {
		return "", err
	}
	root := filepath.Join(cache, "models--"+strings.ReplaceAll(repo, "/", "--"))
	commit := readRef(root)
	if commit != "" {
		dir := filepath.Join(root, "snapshots", commit)
		if missing := lacks(dir, want); len(missing) == 0 {
			return dir, nil
		}
	}
	if why := opt.offline(); why != "" {
		dir := filepath.Join(root, "snapshots", commit)
		if commit == "" {
			return "", fmt.Errorf("%s is not in the Hugging Face cache %s and %s; fetch it once with the network (or `huggingface-cli download %s`), or pass its folder", repo, cache, why, repo)
		}
		return "", fmt.Errorf("%s: the cached snapshot %s has no %s and %s; fetch it once with the network, or pass a complete folder", repo, dir, strings.Join(lacks(dir, want), ", "), why)
	}
	f := &hfFetch{ctx: ctx, opt: opt, repo: repo, root: root, endpoint: HFEndpoint(), rev: revision}
	for _, w := range want {
		if err := f.one(w); err != nil {
			return "", fmt.Errorf("%s: %w", repo, err)
		}
	}
	if f.commit == "" {
		return "", fmt.Errorf("%s: the hub named no commit", repo)
	}
	if err := os.MkdirAll(filepath.Join(root, "refs"), 0o755); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(root, "refs", revision), []byte(f.commit), 0o644); err != nil {
		return "", fmt.Errorf("%s: cannot write refs/%s: %v", repo, revision, err)
	}
	return filepath.Join(root, "snapshots", f.commit), nil
}

// readRef returns the commit refs/main names in the repository's cache
// folder root, "" when none (or not a commit hash).
func readRef(root string) string {
	b, err := os.ReadFile(filepath.Join(root, "refs", revision))
	if err != nil {
		return ""
	}
	c := strings.TrimSpace(string(b))
	if !commitRE.MatchString(c) {
		return ""
	}
	return c
}

var (
	commitRE = regexp.MustCompile(`^[0-9a-f]{40}$`)
	sha256RE = regexp.MustCompile(`^[0-9a-f]{64}$`)
	// etagRE is what an ETag may be to name a blob file.
	etagRE = regexp.MustCompile(`^[0-9A-Za-z_-]{1,128}$`)
)

// lacks returns the wanted files dir has none of (the first name of
// each).
func lacks(dir string, want []Want) []string {
	var out []string
	for _, w := range want {
		if w.Optional {
			continue
		}
		found := false
		for _, n := range w.Names {
			found = found || regular(filepath.Join(dir, n))
		}
		if !found {
			out = append(out, strings.Join(w.Names, " or "))
		}
	}
	return out
}

// hfFetch fetches the files of one snapshot.
type hfFetch struct {
	ctx      context.Context
	opt      Options
	repo     string
	root     string
	endpoint string
	rev      string // main, then the commit the first file named
	commit   string
}

// one fetches the first of w's names the repository has.
func (f *hfFetch) one(w Want) error {
	for _, name := range w.Names {
		if f.commit != "" && regular(filepath.Join(f.root, "snapshots", f.commit, name)) {
			return nil
		}
		found, err := f.file(name)
		if err != nil {
			return err
		}
		if found {
			return nil
		}
	}
	if w.Optional {
		return nil
	}
	return fmt.Errorf("the repository has no %s", strings.Join(w.Names, " or "))
}

// errNotFound is a file the repository does not have.
var errNotFound = errors.New("not found")

// file fetches name; false when the repository has no such file.
func (f *hfFetch) file(name string) (bool, error) {
	url := f.endpoint + "/" + f.repo + "/resolve/" + f.rev + "/" + name
	meta, err := f.head(url)
	if errors.Is(err, errNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if f.commit == "" {
		f.commit, f.rev = meta.commit, meta.commit
	} else if meta.commit != f.commit {
		return false, fmt.Errorf("%s is at commit %s, not %s as the other files", name, meta.commit, f.commit)
	}
	blob := filepath.Join(f.root, "blobs", meta.etag)
	if !regular(blob) {
		var sum string
		if sha256RE.MatchString(meta.etag) {
			sum = meta.etag
		}
		opt := f.opt
		if p := opt.Progress; p != nil {
			// Told as the hub's address, not the CDN's signed one.
			opt.Progress = func(_ string, done, total int64) { p(url, done, total) }
		}
		if err := Download(f.ctx, meta.location, blob, sum, opt); err != nil {
			return false, err
		}
		if st, err := os.Stat(blob); err == nil && meta.size >= 0 && st.Size() != meta.size {
			os.Remove(blob)
			return false, fmt.Errorf("%s: %d bytes, the hub said %d; not stored", name, st.Size(), meta.size)
		}
	}
	return true, link(blob, filepath.Join(f.root, "snapshots", f.commit, name))
}

// hfMeta is what the hub says of a file.
type hfMeta struct {
	commit   string
	etag     string
	size     int64  // -1 when not said
	location string // where to GET it: the redirect's target, else the resolve URL
}

// head asks the hub about url, following redirects within the hub (a
// renamed repository) and stopping at one to another host (the CDN of
// a large file), whose headers describe the file.
func (f *hfFetch) head(url string) (hfMeta, error) {
	c := *f.opt.client()
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	for range 5 {
		req, err := http.NewRequestWithContext(f.ctx, http.MethodHead, url, nil)
		if err != nil {
			return hfMeta{}, fmt.Errorf("bad URL %q: %v", url, err)
		}
		req.Header.Set("Accept-Encoding", "identity") // the ETag of the bytes themselves
		resp, err := c.Do(req)
		if err != nil {
			return hfMeta{}, netError(f.ctx, url, err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		switch {
		case resp.StatusCode == http.StatusNotFound:
			return hfMeta{}, errNotFound
		case resp.StatusCode >= 300 && resp.StatusCode < 400:
			loc, err := resp.Location()
			if err != nil {
				return hfMeta{}, fmt.Errorf("%s: HTTP %s without a Location", url, resp.Status)
			}
			if resp.Header.Get("X-Repo-Commit") == "" && sameHost(loc, resp.Request.URL) {
				url = loc.String() // a renamed repository
				continue
			}
			return meta(resp, url, loc.String())
		case resp.StatusCode == http.StatusOK:
			return meta(resp, url, url)
		case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
			return hfMeta{}, fmt.Errorf("%s: HTTP %s (a gated or private model needs the hub's sign-in, which genlens does not do: download it with huggingface-cli and pass its folder)", url, resp.Status)
		default:
			return hfMeta{}, fmt.Errorf("%s: HTTP %s", url, resp.Status)
		}
	}
	return hfMeta{}, fmt.Errorf("%s: too many redirects", url)
}

// meta reads the headers of the hub's answer about url.
func meta(resp *http.Response, url, location string) (hfMeta, error) {
	m := hfMeta{commit: resp.Header.Get("X-Repo-Commit"), size: -1, location: location}
	m.etag = resp.Header.Get("X-Linked-Etag")
	if m.etag == "" {
		m.etag = resp.Header.Get("ETag")
	}
	m.etag = strings.Trim(strings.TrimPrefix(m.etag, "W/"), `"`)
	size := resp.Header.Get("X-Linked-Size")
	if size == "" && resp.Request.Method == http.MethodHead && resp.StatusCode == http.StatusOK {
		size = resp.Header.Get("Content-Length")
	}
	if n, err := strconv.ParseInt(size, 10, 64); err == nil && n >= 0 {
		m.size = n
	}
	switch {
	case !commitRE.MatchString(m.commit):
		return hfMeta{}, fmt.Errorf("%s: the answer names no commit (X-Repo-Commit %q): is %s a Hugging Face hub?", url, m.commit, HFEndpoint())
	case !etagRE.MatchString(m.etag):
		return hfMeta{}, fmt.Errorf("%s: the answer has no usable ETag (%q)", url, m.etag)
	}
	return m, nil
}

func sameHost(a, b *neturl.URL) bool {
	return a.Host == "" || strings.EqualFold(a.Host, b.Host)
}

// link makes snapshot file name point at blob: a relative symbolic link
// as the hub's own client makes, else (a file system without them) a
// copy.
func link(blob, name string) error {
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return err
	}
	os.Remove(name) // a dangling link from an interrupted run
	rel, err := filepath.Rel(filepath.Dir(name), blob)
	if err == nil && os.Symlink(rel, name) == nil {
		return nil
	}
	src, err := os.Open(blob)
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := os.Create(name + Incomplete)
	if err != nil {
		return err
	}
	if _, err := io.Copy(dst, src); err != nil {
		dst.Close()
		os.Remove(dst.Name())
		return err
	}
	if err := dst.Close(); err != nil {
		return err
	}
	return os.Rename(dst.Name(), name)
}
