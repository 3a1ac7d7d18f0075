package goldenbits

import (
	"bufio"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"flag"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/genlens/genlens/internal/tensor/linalg"
)

// update rewrites the golden files instead of checking them. It is not
// named -update, which job/internal/golden defines for its own files.
var update = flag.Bool("update-bits", false, "record the networks' output bits and arithmetic versions in testdata")

// Sum returns the SHA-256 of rows' float32 bits, little endian, row
// after row, each row preceded by its length.
func Sum(rows [][]float32) string {
	h := sha256.New()
	var b [4]byte
	for _, r := range rows {
		binary.LittleEndian.PutUint32(b[:], uint32(len(r)))
		h.Write(b[:])
		for _, v := range r {
			binary.LittleEndian.PutUint32(b[:], math.Float32bits(v))
			h.Write(b[:])
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Golden is what a golden file records: the arithmetic version, the BLAS
// backend the bits were computed on (linalg.Backend) and their Sum.
type Golden struct {
	Version int
	Backend string
	SHA256  string
}

// Check compares rows, computed under arithmetic version, with the
// golden file. With -update-bits it writes the file instead. The bits
// depend on the backend and on the CPU's kernels, so a build whose
// linalg.Backend differs from the recorded one skips, saying so.
func Check(tb testing.TB, file string, version int, rows [][]float32) {
	tb.Helper()
	got := Golden{Version: version, Backend: linalg.Backend(), SHA256: Sum(rows)}
	if *update {
		if err := Write(file, got); err != nil {
			tb.Fatal(err)
		}
		tb.Logf("%s: recorded arithmetic %d on %s", file, got.Version, got.Backend)
		return
	}
	want, err := Read(file)
	if err != nil {
		tb.Fatalf("%v (record it with -update-bits)", err)
	}
	if want.Backend != got.Backend {
		tb.Skipf("%s records the bits of backend %q; this build runs %q", file, want.Backend, got.Backend)
	}
	if msg := Compare(want, got); msg != "" {
		tb.Errorf("%s: %s", file, msg)
	}
}

// Compare returns "" when got matches want, else what to do.
func Compare(want, got Golden) string {
	switch {
	case got.Version == want.Version && got.SHA256 != want.SHA256:
		return fmt.Sprintf("the output bits changed under arithmetic version %d: raise the version (it keys the feature cache, which would otherwise mix both builds' features) and record the new bits with -update-bits", got.Version)
	case got.Version != want.Version:
		return fmt.Sprintf("arithmetic version %d, the golden file records %d: record the new bits with -update-bits", got.Version, want.Version)
	}
	return ""
}

// Read parses a golden file.
func Read(file string) (Golden, error) {
	f, err := os.Open(file)
	if err != nil {
		return Golden{}, err
	}
	defer f.Close()
	var g Golden
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		key, val, ok := strings.Cut(line, " ")
		switch {
		case !ok:
			return Golden{}, fmt.Errorf("%s line %d: want \"key value\"", file, n)
		case key == "version":
			if g.Version, err = strconv.Atoi(val); err != nil {
				return Golden{}, fmt.Errorf("%s line %d: version: %v", file, n, err)
			}
		case key == "backend":
			g.Backend = val
		case key == "sha256":
			g.SHA256 = val
		default:
			return Golden{}, fmt.Errorf("%s line %d: unknown key %q", file, n, key)
		}
	}
	if err := sc.Err(); err != nil {
		return Golden{}, err
	}
	if g.Version == 0 || g.Backend == "" || len(g.SHA256) != 64 {
		return Golden{}, fmt.Errorf("%s: want version, backend and sha256 lines", file)
	}
	return g, nil
}

// Write writes g to file.
func Write(file string, g Golden) error {
	s := fmt.Sprintf("# The SHA-256 of a network's output bits on the test's fixed inputs,\n# under one arithmetic version and BLAS backend (see internal/goldenbits).\nversion %d\nbackend %s\nsha256 %s\n", g.Version, g.Backend, g.SHA256)
	return os.WriteFile(file, []byte(s), 0o644)
}
