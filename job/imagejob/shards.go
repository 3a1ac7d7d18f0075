package imagejob

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/genlens/genlens/dataio"
	"github.com/genlens/genlens/fault"
	"github.com/genlens/genlens/job"
	"github.com/genlens/genlens/metric/frechet"
)

// This file holds what splits one feature computation over many
// processes: the shard index of a process (a flag, a Kubernetes Indexed
// Job's or a Slurm array's environment), the deterministic split of a
// folder or a feature file, feature-file arguments naming several files,
// and `genlens stats merge`.

// Environment variables that carry the shard index of a process.
const (
	EnvJobCompletionIndex = "JOB_COMPLETION_INDEX" // Kubernetes Indexed Job, 0-based
	EnvSlurmArrayTaskID   = "SLURM_ARRAY_TASK_ID"  // Slurm job array
	EnvSlurmArrayTaskMin  = "SLURM_ARRAY_TASK_MIN" // the array's first index, subtracted
	shardSources          = "{shard}, " + EnvJobCompletionIndex + " or " + EnvSlurmArrayTaskID
)

// ShardIndex resolves the 0-based shard index of this process for a
// computation split into shards parts: flag when given (flagSet), else
// $JOB_COMPLETION_INDEX (a Kubernetes Indexed Job), else
// $SLURM_ARRAY_TASK_ID − $SLURM_ARRAY_TASK_MIN (a Slurm job array;
// SLURM_ARRAY_TASK_MIN taken as 0 when unset). getenv reads the
// environment (os.Getenv on the command line). No index at all, a value
// that is not an integer, and an index outside [0, shards) are field
// errors naming the three sources.
func ShardIndex(cmd string, shards, flag int, flagSet bool, getenv func(string) string) (int, error) {
	idx, from := flag, "{shard}"
	switch {
	case flagSet:
	case getenv(EnvJobCompletionIndex) != "":
		v, err := strconv.Atoi(strings.TrimSpace(getenv(EnvJobCompletionIndex)))
		if err != nil {
			return 0, fault.Fieldf("shard", "%s: %s=%q is not an integer (the shard index comes from %s)", cmd, EnvJobCompletionIndex, getenv(EnvJobCompletionIndex), shardSources)
		}
		idx, from = v, EnvJobCompletionIndex
	case getenv(EnvSlurmArrayTaskID) != "":
		v, err := strconv.Atoi(strings.TrimSpace(getenv(EnvSlurmArrayTaskID)))
		if err != nil {
			return 0, fault.Fieldf("shard", "%s: %s=%q is not an integer (the shard index comes from %s)", cmd, EnvSlurmArrayTaskID, getenv(EnvSlurmArrayTaskID), shardSources)
		}
		lo := 0
		if m := strings.TrimSpace(getenv(EnvSlurmArrayTaskMin)); m != "" {
			if lo, err = strconv.Atoi(m); err != nil {
				return 0, fault.Fieldf("shard", "%s: %s=%q is not an integer", cmd, EnvSlurmArrayTaskMin, m)
			}
		}
		idx, from = v-lo, fmt.Sprintf("%s %d − %s %d", EnvSlurmArrayTaskID, v, EnvSlurmArrayTaskMin, lo)
	default:
		return 0, fault.Fieldf("shard", "%s: no shard index: give %s (0-based, below {shards} %d)", cmd, shardSources, shards)
	}
	if idx < 0 || idx >= shards {
		return 0, fault.Fieldf("shard", "%s: shard index %d (from %s) out of range: want 0 to %d for {shards} %d (the index comes from %s)", cmd, idx, from, shards-1, shards, shardSources)
	}
	return idx, nil
}

// checkShards validates a shard count and index of a request.
func checkShards(cmd string, shards, shard int) error {
	switch {
	case shards < 0 || shards > frechet.MaxShards:
		return fault.Fieldf("shards", "%s: {shards} %d: want 1 to %d", cmd, shards, frechet.MaxShards)
	case shards == 0 && shard != 0:
		return fault.Fieldf("shard", "%s: {shard} %d without {shards}", cmd, shard)
	case shards > 0 && (shard < 0 || shard >= shards):
		return fault.Fieldf("shard", "%s: {shard} %d out of range: want 0 to %d for {shards} %d", cmd, shard, shards-1, shards)
	}
	return nil
}

// ShardOf returns the shard, among shards, of the image at rel, its
// slash-separated path relative to the folder: the first 8 bytes of its
// SHA-256 modulo shards. It depends on the name alone, so every machine
// that lists the folder in any order puts each image in the same shard.
func ShardOf(rel string, shards int) int {
	h := sha256.Sum256([]byte(rel))
	return int(binary.BigEndian.Uint64(h[:8]) % uint64(shards))
}

// relPaths returns the slash-separated paths of files relative to dir.
func relPaths(dir string, files []string) ([]string, error) {
	rels := make([]string, len(files))
	for i, f := range files {
		r, err := filepath.Rel(dir, f)
		if err != nil {
			return nil, fmt.Errorf("%s relative to %s: %w", f, dir, err)
		}
		rels[i] = filepath.ToSlash(r)
	}
	return rels, nil
}

// folderShard returns the listing of a whole folder (count and SHA-256 of
// its sorted relative paths, NUL-terminated) and the files of shard.
func folderShard(dir string, files []string, shard, shards int) (frechet.Listing, []string, error) {
	rels, err := relPaths(dir, files)
	if err != nil {
		return frechet.Listing{}, nil, err
	}
	order := make([]int, len(rels))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return strings.Compare(rels[a], rels[b]) })
	h := sha256.New()
	var mine []string
	for _, i := range order {
		io.WriteString(h, rels[i])
		h.Write([]byte{0})
		if ShardOf(rels[i], shards) == shard {
			mine = append(mine, files[i])
		}
	}
	return frechet.Listing{Kind: "folder", Count: len(files), SHA256: hex.EncodeToString(h.Sum(nil))}, mine, nil
}

// ShardRows returns the contiguous rows [shard·n/shards, (shard+1)·n/shards)
// of n rows: the split of a feature file.
func ShardRows(n, shard, shards int) (lo, hi int) {
	return shard * n / shards, (shard + 1) * n / shards
}

// fileListing returns the listing of feature rows read from paths (array
// key of an .npz, "" for the only one): the row and column counts and the
// SHA-256 of the files' bytes (of their SHA-256s, in order, when there
// are several, and of the key when one was given, so that two arrays of
// one archive are different inputs).
func fileListing(fsys fs.FS, paths []string, key string, rows, cols int) (frechet.Listing, error) {
	var sums [][]byte
	for _, p := range paths {
		f, err := fsys.Open(p)
		if err != nil {
			return frechet.Listing{}, &fault.InputError{File: p, Msg: "cannot read: " + err.Error(), Err: err}
		}
		h := sha256.New()
		_, err = io.Copy(h, f)
		f.Close()
		if err != nil {
			return frechet.Listing{}, &fault.InputError{File: p, Msg: "cannot read: " + err.Error(), Err: err}
		}
		sums = append(sums, h.Sum(nil))
	}
	sum := sums[0]
	if len(sums) > 1 || key != "" {
		h := sha256.New()
		for _, s := range sums {
			h.Write(s)
		}
		if key != "" {
			io.WriteString(h, "\x00key="+key)
		}
		sum = h.Sum(nil)
	}
	return frechet.Listing{Kind: "features", Count: rows, Cols: cols, SHA256: hex.EncodeToString(sum)}, nil
}

// isGlob reports whether path holds a pattern character of path.Match.
func isGlob(path string) bool { return strings.ContainsAny(path, "*?[") }

// expandRows returns the files a feature-file argument names: path
// itself, or, when it holds a pattern (parts/*.npy, quoted so that the
// shell leaves it alone), the matching files in sorted order.
func expandRows(fsys fs.FS, path string) ([]string, error) {
	if !isGlob(path) {
		return []string{path}, nil
	}
	if _, err := fs.Stat(fsys, path); err == nil {
		return []string{path}, nil // a file whose name holds a '*'
	}
	m, err := fs.Glob(fsys, path)
	if err != nil {
		return nil, &fault.InputError{File: path, Msg: "bad pattern: " + err.Error(), Err: err}
	}
	if len(m) == 0 {
		return nil, &fault.InputError{File: path, Msg: "no file matches the pattern", Err: fs.ErrNotExist}
	}
	if len(m) > frechet.MaxShards {
		return nil, &fault.InputError{File: path, Msg: fmt.Sprintf("%d files match; at most %d are read", len(m), frechet.MaxShards)}
	}
	slices.Sort(m)
	return m, nil
}

// StatsMergeRequest is a request of `genlens stats merge`: the part files
// of `genlens stats --shards K`, merged into the statistics of the whole
// input.
type StatsMergeRequest struct {
	Parts []string `json:"parts"`
	// AllowMissing merges the parts present when some shard indices have
	// no part (the result says which); without it a missing shard is an
	// error.
	AllowMissing bool `json:"allow_missing,omitempty" help:"merge the parts present when some shards have none (the output says which)"`
}

// NewStatsMergeRequest returns a request with the command line's
// defaults and no parts.
func NewStatsMergeRequest() StatsMergeRequest { return StatsMergeRequest{} }

// Validate checks the fields that need no input file.
func (r *StatsMergeRequest) Validate() error {
	switch {
	case len(r.Parts) == 0:
		return fault.Fieldf("parts", "stats merge: {parts}: give the part files of every shard")
	case len(r.Parts) > frechet.MaxShards:
		return fault.Fieldf("parts", "stats merge: %d {parts}: at most %d", len(r.Parts), frechet.MaxShards)
	}
	return nil
}

// StatsMergeResult is the result of `genlens stats merge`.
type StatsMergeResult struct {
	N        int    `json:"n"`
	Dim      int    `json:"dim"`
	Parts    int    `json:"parts"`
	Shards   int    `json:"shards"`
	Missing  []int  `json:"missing"` // shard indices without a part (only with allow_missing)
	Embedder string `json:"embedder"`
	Mode     string `json:"mode"`
	Dims     string `json:"dims"`
	Weights  string `json:"weights_sha256"`

	Stats frechet.Stats     `json:"-"`
	Meta  map[string]string `json:"-"` // the provenance entries of the file
	// Path is the file the transport wrote the result to, for the text.
	Path string `json:"-"`
}

// StatsMerge runs `genlens stats merge`: it reads the headers of every
// part, refuses (naming the file) a path given twice, two parts of one
// shard index, parts of different shard counts, inputs, provenance or
// dimensions, and (unless AllowMissing) a missing shard index, then
// reads the parts one at a time in shard order and merges them by Chan,
// Golub and LeVeque's pairwise formula in a fixed tree
// (frechet.TreeMerger), so the order of req.Parts changes no bit.
func StatsMerge(ctx context.Context, env job.Env, req StatsMergeRequest) (*StatsMergeResult, error) {
	if err := req.Validate(); err != nil {
		return nil, err
	}
	fsys := env.InputFS()
	type entry struct {
		path string
		p    *frechet.Part
		d    int
	}
	var es []entry
	seen := map[string]string{}
	for _, path := range req.Parts {
		key := filepath.Clean(path)
		if abs, err := filepath.Abs(key); err == nil && fsys == dataio.HostFS {
			key = abs
		}
		if prev, ok := seen[key]; ok {
			return nil, &fault.InputError{File: path, Msg: fmt.Sprintf("given twice (also as %s)", prev)}
		}
		seen[key] = path
		p, d, err := frechet.ReadPartInfo(fsys, path)
		if err != nil {
			return nil, err
		}
		es = append(es, entry{path, p, d})
	}
	// The same file under two names (a link): os.SameFile on the host.
	if fsys == dataio.HostFS {
		infos := make([]os.FileInfo, len(es))
		for i, e := range es {
			infos[i], _ = os.Stat(e.path)
		}
		for i := range es {
			for j := 0; j < i; j++ {
				if infos[i] != nil && infos[j] != nil && os.SameFile(infos[i], infos[j]) {
					return nil, &fault.InputError{File: es[i].path, Msg: fmt.Sprintf("is the same file as %s, given twice", es[j].path)}
				}
			}
		}
	}
	slices.SortStableFunc(es, func(a, b entry) int { return a.p.Shard - b.p.Shard })
	first := es[0]
	for i, e := range es {
		if msg := first.p.Compatible(e.p); msg != "" {
			return nil, &fault.InputError{File: e.path, Msg: fmt.Sprintf("part of %s than %s; parts of one run must share the shard count, input and provenance", msg, first.path)}
		}
		if e.d != first.d {
			return nil, &fault.InputError{File: e.path, Msg: fmt.Sprintf("%d-dimensional, %s is %d-dimensional", e.d, first.path, first.d)}
		}
		if i > 0 && e.p.Shard == es[i-1].p.Shard {
			return nil, &fault.InputError{File: e.path, Msg: fmt.Sprintf("holds shard %d, as %s does: a shard given twice", e.p.Shard, es[i-1].path)}
		}
	}
	k := first.p.Shards
	var missing []int
	have := map[int]bool{}
	for _, e := range es {
		have[e.p.Shard] = true
	}
	for i := 0; i < k; i++ {
		if !have[i] {
			missing = append(missing, i)
		}
	}
	if len(missing) > 0 && !req.AllowMissing {
		return nil, fault.Fieldf("parts", "stats merge: missing shard%s %s of %d (0-based); give %s, or {allow_missing} to merge without %s",
			plural(len(missing)), fmtInts(missing, 20), k, map[bool]string{true: "its part", false: "their parts"}[len(missing) == 1],
			map[bool]string{true: "it", false: "them"}[len(missing) == 1])
	}
	if len(missing) > 0 {
		env.Warning(fmt.Sprintf("stats merge: merging %d of %d shards; missing %s", len(es), k, fmtInts(missing, 20)))
	}
	var tm frechet.TreeMerger
	env.ReportProgress(0, len(es))
	for i, e := range es {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		p, err := frechet.ReadPart(fsys, e.path)
		if err != nil {
			return nil, err
		}
		tm.Push(frechet.TakeAccumulator(p))
		env.ReportProgress(i+1, len(es))
	}
	acc := tm.Result()
	if acc.N() < 2 {
		return nil, &fault.InputError{File: first.path, Msg: fmt.Sprintf("the parts hold %d row(s) in all; a covariance needs 2", acc.N())}
	}
	st := acc.TakeStats(1)
	if w := singularWarning("stats merge", fmt.Sprintf("the merge of %d part%s", len(es), plural(len(es))), st.N, st.Dim(), "a Fréchet distance (FID) from these statistics"); w != "" {
		env.Warning(w)
	}
	prov := first.p.Prov
	prov.Input = first.p.Listing.SHA256
	if missing == nil {
		missing = []int{}
	}
	return &StatsMergeResult{N: st.N, Dim: st.Dim(), Parts: len(es), Shards: k, Missing: missing,
		Embedder: prov.Embedder, Mode: prov.Mode, Dims: prov.Dims, Weights: prov.Weights, Stats: st, Meta: prov.StatsMeta()}, nil
}

// Artifact returns the merged statistics file: mu, sigma (n − 1) and n
// as pytorch-fid reads them, plus the provenance as text.
func (r *StatsMergeResult) Artifact(name string) job.Artifact {
	return job.Artifact{Name: name, Write: func(w io.Writer) error { return frechet.EncodeStatsMeta(w, r.Stats, r.Meta) }}
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// fmtInts lists up to max integers, then how many more.
func fmtInts(v []int, max int) string {
	var parts []string
	for i, x := range v {
		if i == max {
			parts = append(parts, fmt.Sprintf("and %d more", len(v)-max))
			break
		}
		parts = append(parts, strconv.Itoa(x))
	}
	return strings.Join(parts, ", ")
}

// rowsOfFiles concatenates the rows of several feature files, which must
// have the same column count.
func rowsOfFiles(files []string, ms []*mat.Dense) (*mat.Dense, error) {
	if len(ms) == 1 {
		return ms[0], nil
	}
	n, d := 0, ms[0].RawMatrix().Cols
	for i, m := range ms {
		r, c := m.Dims()
		if c != d {
			return nil, &fault.InputError{File: files[i], Msg: fmt.Sprintf("%d columns, %s has %d: the files of one pattern must hold the same features", c, files[0], d)}
		}
		n += r
	}
	out := mat.NewDense(n, d, nil)
	at := 0
	for _, m := range ms {
		r, _ := m.Dims()
		out.Slice(at, at+r, 0, d).(*mat.Dense).Copy(m)
		at += r
	}
	return out, nil
}
