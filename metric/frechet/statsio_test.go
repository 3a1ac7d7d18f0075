package frechet

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/genlens/genlens/dataio"
	"github.com/genlens/genlens/fault"
)

// npyFloat32 encodes a C-order little-endian float32 .npy file, as
// np.save writes a float32 array.
func npyFloat32(shape []int, data []float32) []byte {
	dims := make([]string, len(shape))
	for i, s := range shape {
		dims[i] = fmt.Sprint(s)
	}
	sh := strings.Join(dims, ", ")
	if len(shape) == 1 {
		sh += ","
	}
	header := fmt.Sprintf("{'descr': '<f4', 'fortran_order': False, 'shape': (%s), }", sh)
	pad := 64 - (10+len(header)+1)%64
	header += strings.Repeat(" ", pad%64) + "\n"
	var b bytes.Buffer
	b.WriteString("\x93NUMPY\x01\x00")
	binary.Write(&b, binary.LittleEndian, uint16(len(header)))
	b.WriteString(header)
	binary.Write(&b, binary.LittleEndian, data)
	return b.Bytes()
}

// writeZip writes members (name -> bytes) as an uncompressed zip, the
// layout of np.savez.
func writeZip(t *testing.T, path string, members map[string][]byte) {
	t.Helper()
	var b bytes.Buffer
	w := zip.NewWriter(&b)
	for name, data := range members {
		f, err := w.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Store})
		if err != nil {
			t.Fatal(err)
		}
		f.Write(data)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestStatsRoundTrip(t *testing.T) {
	dir := t.TempDir()
	s := Stats{N: 42, Mu: []float64{1.5, -2, 1e-300}, Sigma: mat.NewSymDense(3, []float64{
		2, 0.1, -0.3,
		0.1, 1, 1.0 / 3,
		-0.3, 1.0 / 3, 5,
	})}
	path := filepath.Join(dir, "stats.npz")
	if err := WriteStats(path, s); err != nil {
		t.Fatal(err)
	}
	got, err := ReadStats(path)
	if err != nil {
		t.Fatal(err)
	}
	if got.N != 42 || !mat.Equal(got.Sigma, s.Sigma) || !mat.Equal(mat.NewVecDense(3, got.Mu), mat.NewVecDense(3, s.Mu)) {
		t.Errorf("round trip: got %+v\n%v", got, mat.Formatted(got.Sigma))
	}
	// Without a sample count no n is written, and N reads as 0.
	s.N = 0
	if err := WriteStats(path, s); err != nil {
		t.Fatal(err)
	}
	if keys, _ := dataio.NPZKeys(path); strings.Join(keys, ",") != "mu,sigma" {
		t.Errorf("keys = %v, want mu, sigma", keys)
	}
	if got, err := ReadStats(path); err != nil || got.N != 0 {
		t.Errorf("ReadStats = %+v, %v", got, err)
	}
	if err := WriteStats(path, Stats{Mu: []float64{1}}); err == nil {
		t.Error("WriteStats without sigma: no error")
	}
	// EncodeStats writes the bytes of WriteStats.
	var b bytes.Buffer
	if err := EncodeStats(&b, s); err != nil {
		t.Fatal(err)
	}
	if file, _ := os.ReadFile(path); !bytes.Equal(file, b.Bytes()) {
		t.Error("EncodeStats and WriteStats differ")
	}
	if err := EncodeStats(&b, Stats{Mu: []float64{1}}); err == nil {
		t.Error("EncodeStats without sigma: no error")
	}
}

func TestReadStatsPytorchFID(t *testing.T) {
	// pytorch-fid's --save-stats: np.savez(path, mu=mu, sigma=sigma) with
	// float32 arrays when the features were float32.
	dir := t.TempDir()
	path := filepath.Join(dir, "fid_stats.npz")
	mu := []float32{0.25, 0.5}
	sigma := []float32{1.5, 0.1, 0.1, 0.7}
	writeZip(t, path, map[string][]byte{
		"mu.npy":    npyFloat32([]int{2}, mu),
		"sigma.npy": npyFloat32([]int{2, 2}, sigma),
	})
	s, err := ReadStats(path)
	if err != nil {
		t.Fatal(err)
	}
	if s.Mu[1] != 0.5 || s.Sigma.At(0, 1) != float64(float32(0.1)) || s.Sigma.At(1, 1) != float64(float32(0.7)) {
		t.Errorf("read %v %v", s.Mu, mat.Formatted(s.Sigma))
	}
	fd, err := Distance(s, s)
	if err != nil || fd != 0 {
		t.Errorf("FD(s, s) = %g, %v", fd, err)
	}
}

func TestReadStatsErrors(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name    string
		members map[string][]byte
		want    string
	}{
		{"missing sigma", map[string][]byte{"mu.npy": npyFloat32([]int{2}, []float32{1, 2})}, `missing array "sigma"`},
		{"missing mu", map[string][]byte{"sigma.npy": npyFloat32([]int{1, 1}, []float32{1})}, `missing array "mu"`},
		{"sigma shape", map[string][]byte{
			"mu.npy":    npyFloat32([]int{2}, []float32{1, 2}),
			"sigma.npy": npyFloat32([]int{3, 3}, make([]float32, 9)),
		}, "want a 2×2 covariance matrix"},
		{"mu rank", map[string][]byte{
			"mu.npy":    npyFloat32([]int{1, 2}, []float32{1, 2}),
			"sigma.npy": npyFloat32([]int{2, 2}, make([]float32, 4)),
		}, "want a 1-D mean vector, got shape (1, 2)"},
		{"asymmetric", map[string][]byte{
			"mu.npy":    npyFloat32([]int{2}, []float32{1, 2}),
			"sigma.npy": npyFloat32([]int{2, 2}, []float32{1, 0.5, -0.5, 1}),
		}, "not symmetric"},
		{"negative variance", map[string][]byte{
			"mu.npy":    npyFloat32([]int{2}, []float32{1, 2}),
			"sigma.npy": npyFloat32([]int{2, 2}, []float32{1, 0, 0, -1}),
		}, "variance cannot be negative"},
		{"indefinite", map[string][]byte{
			"mu.npy":    npyFloat32([]int{3}, []float32{1, 2, 3}),
			"sigma.npy": npyFloat32([]int{3, 3}, []float32{1, 0, 0, 0, 1, 3, 0, 3, 1}),
		}, `key "sigma" row 2: sigma[1][2]: covariance is not positive semidefinite: |3| exceeds √(sigma[1][1]·sigma[2][2]) = 1`},
		{"NaN", map[string][]byte{
			"mu.npy":    npyFloat32([]int{2}, []float32{1, float32(math.NaN())}),
			"sigma.npy": npyFloat32([]int{2, 2}, []float32{1, 0, 0, 1}),
		}, "NaN"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_")+".npz")
			writeZip(t, path, tc.members)
			_, err := ReadStats(path)
			var ie *fault.InputError
			if !errors.As(err, &ie) {
				t.Fatalf("error %v (%T) is not a *fault.InputError", err, err)
			}
			if msg := err.Error(); !strings.Contains(msg, path) || !strings.Contains(msg, tc.want) {
				t.Errorf("error %q does not name the file and say %q", msg, tc.want)
			}
			if strings.Contains(ie.Msg, "frechet:") || strings.Contains(ie.Msg, "statistics:") {
				t.Errorf("message %q names the package or the statistics: the file names them", ie.Msg)
			}
		})
	}
	if _, err := ReadStats(filepath.Join(dir, "absent.npz")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}
