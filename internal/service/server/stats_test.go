package server_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"mime/multipart"
	"net/http"
	"sync"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/genlens/genlens/internal/service/server"
	"github.com/genlens/genlens/internal/testkit/dbtest"
	"github.com/genlens/genlens/metric/frechet"
)

// testParts returns the part files of k shards of n random rows of
// dimension d (listing sha tag), and the merge of the parts.
func testParts(t *testing.T, n, d, k int, tag string) ([][]byte, frechet.Stats) {
	t.Helper()
	rng := rand.New(rand.NewPCG(uint64(n), uint64(k)))
	x := mat.NewDense(n, d, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < d; j++ {
			x.Set(i, j, 1e4+rng.NormFloat64()+float64(j))
		}
	}
	var files [][]byte
	var parts []*frechet.Part
	for i := 0; i < k; i++ {
		lo, hi := i*n/k, (i+1)*n/k
		a := frechet.NewAccumulator(d)
		a.AddRows(x.Slice(lo, hi, 0, d).(*mat.Dense))
		p := frechet.PartOf(a, i, k, frechet.Listing{Kind: "features", Count: n, Cols: d, SHA256: tag}, frechet.Provenance{Embedder: "features", Dims: fmt.Sprint(d)})
		var buf bytes.Buffer
		if err := frechet.EncodePart(&buf, p); err != nil {
			t.Fatal(err)
		}
		files = append(files, buf.Bytes())
		parts = append(parts, p)
	}
	return files, frechet.MergeParts(parts).Stats(1)
}

func (ts *testServer) postPart(t testing.TB, name string, data []byte) (int, map[string]any) {
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	fw, _ := mw.CreateFormFile("file", "part.npz")
	fw.Write(data)
	mw.Close()
	req, _ := http.NewRequest("POST", ts.URL+"/api/v1/stats/"+name+"/parts", &body)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	resp, err := ts.Client().Do(req)
	if err != nil {
		t.Error(err)
		return 0, nil
	}
	defer resp.Body.Close()
	var out map[string]any
	json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

// TestStatsPartsTwoReplicas: two servers on one database receive the
// parts of one name at once, each part twice; none is lost, duplicates
// answer 200, and the merged statistics equal the command line's merge
// bit for bit. A different part of a held shard is 409, a part of other
// inputs 422.
func TestStatsPartsTwoReplicas(t *testing.T) {
	for _, b := range dbtest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			dsn := b.DSN(t)
			jo := server.JobOptions{DataDir: t.TempDir()}
			r1 := newTestServer(t, dsn, server.Options{Jobs: jo})
			r2 := newTestServer(t, dsn, server.Options{Jobs: server.JobOptions{DataDir: t.TempDir()}})
			const k = 12
			files, want := testParts(t, 300, 5, k, "aa")

			// Nothing yet.
			if code, _ := r1.call(t, "GET", "/api/v1/stats/real", nil, nil); code != 404 {
				t.Fatalf("unknown name: %d, want 404", code)
			}
			var mu sync.Mutex
			codes := map[int]int{}
			var wg sync.WaitGroup
			for i := 0; i < 2*k; i++ {
				wg.Add(1)
				go func(i int) {
					defer wg.Done()
					ts := r1
					if i%2 == 1 {
						ts = r2
					}
					code, _ := ts.postPart(t, "real", files[i%k])
					mu.Lock()
					codes[code]++
					mu.Unlock()
				}(i)
			}
			wg.Wait()
			if codes[201] != k || codes[200] != k {
				t.Fatalf("statuses %v: want %d × 201 and %d × 200", codes, k, k)
			}
			var got struct {
				N        int         `json:"n"`
				Mu       []float64   `json:"mu"`
				Sigma    [][]float64 `json:"sigma"`
				Complete bool        `json:"complete"`
				Missing  []int       `json:"missing"`
			}
			if code, raw := r2.call(t, "GET", "/api/v1/stats/real", nil, &got); code != 200 {
				t.Fatalf("GET: %d %s", code, raw)
			}
			if got.N != 300 || !got.Complete || len(got.Missing) != 0 {
				t.Fatalf("n %d, complete %v, missing %v", got.N, got.Complete, got.Missing)
			}
			for i := range want.Mu {
				if math.Float64bits(got.Mu[i]) != math.Float64bits(want.Mu[i]) {
					t.Fatalf("mu[%d] %v, want %v", i, got.Mu[i], want.Mu[i])
				}
				for j := range want.Mu {
					if math.Float64bits(got.Sigma[i][j]) != math.Float64bits(want.Sigma.At(i, j)) {
						t.Fatalf("sigma[%d][%d] %v, want %v", i, j, got.Sigma[i][j], want.Sigma.At(i, j))
					}
				}
			}
			// The statistics file: the command line's bytes.
			resp, err := r1.Client().Get(r1.URL + "/api/v1/stats/real?format=npz")
			if err != nil {
				t.Fatal(err)
			}
			npz, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			var wantNPZ bytes.Buffer
			if err := frechet.EncodeStatsMeta(&wantNPZ, want, frechet.Provenance{Embedder: "features", Dims: "5"}.StatsMeta()); err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != 200 || !bytes.Equal(npz, wantNPZ.Bytes()) {
				t.Fatalf("npz: %d, %d bytes; want 200 and the %d bytes of the merged file", resp.StatusCode, len(npz), wantNPZ.Len())
			}

			// Another part for shard 0 (other rows): 409. Parts of other
			// inputs: 422. Not a part: 422.
			other, _ := testParts(t, 301, 5, k, "aa")
			if code, out := r1.postPart(t, "real", other[0]); code != 422 {
				t.Errorf("part of a listing of 301 rows: %d %v, want 422", code, out)
			}
			diff, _ := testParts(t, 300, 5, k+1, "aa")
			if code, out := r2.postPart(t, "real", diff[0]); code != 422 {
				t.Errorf("part of %d shards: %d %v, want 422", k+1, code, out)
			}
			if code, out := r2.postPart(t, "real", []byte("not an npz")); code != 422 {
				t.Errorf("garbage: %d %v, want 422", code, out)
			}
			if code, _ := r2.postPart(t, "bad name!", files[0]); code != 400 && code != 404 {
				t.Errorf("bad name: %d", code)
			}
		})
	}
}

// TestStatsPartsConflictAndMissing: a different part for a held shard is
// 409; while shards are missing the JSON says which and the npz is 409
// unless allow_missing=true.
func TestStatsPartsConflictAndMissing(t *testing.T) {
	ts := newJobServer(t, server.JobOptions{})
	files, _ := testParts(t, 100, 3, 4, "bb")
	// The same listing and provenance, other numbers for shard 1.
	alt1 := perturbedPart(t, 100, 3, 4, 1, "bb")
	if code, out := ts.postPart(t, "gen", files[1]); code != 201 || out["duplicate"] != false {
		t.Fatalf("first part: %d %v", code, out)
	}
	if code, out := ts.postPart(t, "gen", files[1]); code != 200 || out["duplicate"] != true {
		t.Fatalf("the same part again: %d %v", code, out)
	}
	if code, out := ts.postPart(t, "gen", alt1); code != 409 {
		t.Fatalf("another part for shard 1: %d %v, want 409", code, out)
	}
	var got struct {
		N        int   `json:"n"`
		Complete bool  `json:"complete"`
		Missing  []int `json:"missing"`
	}
	ts.call(t, "GET", "/api/v1/stats/gen", nil, &got)
	if got.Complete || fmt.Sprint(got.Missing) != "[0 2 3]" || got.N != 25 {
		t.Fatalf("incomplete: %+v", got)
	}
	if code, _ := ts.call(t, "GET", "/api/v1/stats/gen?format=npz", nil, nil); code != 409 {
		t.Errorf("npz of an incomplete set: %d, want 409", code)
	}
	if code, _ := ts.call(t, "GET", "/api/v1/stats/gen?format=npz&allow_missing=true", nil, nil); code != 200 {
		t.Errorf("npz with allow_missing: %d, want 200", code)
	}
}

// perturbedPart is shard i of testParts' split with every row shifted.
func perturbedPart(t *testing.T, n, d, k, i int, tag string) []byte {
	a := frechet.NewAccumulator(d)
	for r := 0; r < (i+1)*n/k-i*n/k; r++ {
		row := make([]float64, d)
		for j := range row {
			row[j] = float64(r*j) + 0.5
		}
		a.Add(row)
	}
	p := frechet.PartOf(a, i, k, frechet.Listing{Kind: "features", Count: n, Cols: d, SHA256: tag}, frechet.Provenance{Embedder: "features", Dims: fmt.Sprint(d)})
	var buf bytes.Buffer
	if err := frechet.EncodePart(&buf, p); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// DELETE removes a name and its parts; the name then takes new parts.
func TestStatsDelete(t *testing.T) {
	ts := newJobServer(t, server.JobOptions{})
	files, _ := testParts(t, 40, 3, 2, "cc")
	if code, out := ts.postPart(t, "gone", files[0]); code != 201 {
		t.Fatalf("part: %d %v", code, out)
	}
	if code, _ := ts.call(t, "DELETE", "/api/v1/stats/gone", nil, nil); code != 204 {
		t.Fatalf("DELETE: %d, want 204", code)
	}
	if code, _ := ts.call(t, "GET", "/api/v1/stats/gone", nil, nil); code != 404 {
		t.Errorf("GET after DELETE: %d, want 404", code)
	}
	if code, _ := ts.call(t, "DELETE", "/api/v1/stats/gone", nil, nil); code != 404 {
		t.Errorf("DELETE again: %d, want 404", code)
	}
}
