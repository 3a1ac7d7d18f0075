package server_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"testing"

	"github.com/genlens/genlens/internal/service/server"
	"github.com/genlens/genlens/internal/testkit/dbtest"
)

// BenchmarkSelectionSamplesHTTP measures one POST .../samples of 8
// feature rows of dimension 64 through HTTP and the SQLite store (or
// Postgres when GENLENS_TEST_POSTGRES is set): decoding, checks, the
// durable append and the FID-UCB update.
func BenchmarkSelectionSamplesHTTP(b *testing.B) {
	for _, be := range dbtest.Backends(b) {
		b.Run(be.Name, func(b *testing.B) {
			ts := newTestServer(b, be.DSN(b), server.Options{Jobs: server.JobOptions{DataDir: b.TempDir()}})
			const d = 64
			r := rand.New(rand.NewPCG(1, 2))
			ref := make([]float64, 4*d*d)
			for i := range ref {
				ref[i] = r.NormFloat64()
			}
			_, up := ts.uploadFile(b, "ref.npy", npyFile(b, []int{4 * d, d}, ref))
			var sel struct{ ID string }
			ts.call(b, "POST", "/api/v1/selections", fmt.Sprintf(`{"generators":["a","b","c"],"ref":%q}`, up["id"]), &sel)
			bodies := make([][]byte, 30)
			for i := range bodies {
				rows := make([][]float64, 8)
				for k := range rows {
					rows[k] = make([]float64, d)
					for j := range rows[k] {
						rows[k][j] = r.NormFloat64()
					}
				}
				bodies[i], _ = json.Marshal(map[string]any{"generator": []string{"a", "b", "c"}[i%3], "features": rows})
			}
			url := ts.URL + "/api/v1/selections/" + sel.ID + "/samples"
			i := 0
			for b.Loop() {
				resp, err := ts.Client().Post(url, "application/json", bytes.NewReader(bodies[i%len(bodies)]))
				if err != nil {
					b.Fatal(err)
				}
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					b.Fatalf("status %d", resp.StatusCode)
				}
				i++
			}
		})
	}
}
