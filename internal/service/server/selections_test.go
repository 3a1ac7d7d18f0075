package server_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
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

// A selection's fid_bonus is the one `genlens select --fid-bonus` takes:
// auto by default (fducb2025 on these 3-dimensional features, at most
// 512), a form by name, and the status names the form fid-ucb runs (no
// form for greedy, which has no bonus). A bad value, or one for is, is
// a 400 naming the field on one line.
func TestSelectionFIDBonus(t *testing.T) {
	ts := newJobServer(t, server.JobOptions{})
	r := rand.New(rand.NewPCG(5, 6))
	ref := make([]float64, 100*3)
	for i := range ref {
		ref[i] = r.NormFloat64()
	}
	_, up := ts.uploadFile(t, "ref.npy", npyFile(t, []int{100, 3}, ref))
	for _, c := range []struct {
		name, extra string
		want        string // the status's fid_bonus
	}{
		{"default", ``, "fducb2025"},
		{"auto", `,"fid_bonus":"auto"`, "fducb2025"},
		{"paper", `,"fid_bonus":"paper"`, "paper"},
		{"code2024", `,"fid_bonus":"code2024"`, "code2024"},
		{"fducb2025", `,"fid_bonus":"fducb2025"`, "fducb2025"},
		{"greedy", `,"algorithm":"greedy","fid_bonus":"paper"`, ""},
	} {
		body := fmt.Sprintf(`{"generators":["a","b"],"ref":%q%s}`, up["id"], c.extra)
		var created struct {
			ID       string
			FIDBonus *string `json:"fid_bonus"`
		}
		if code, raw := ts.call(t, "POST", "/api/v1/selections", body, &created); code != 201 {
			t.Errorf("%s: %d %s", c.name, code, raw)
			continue
		}
		var got struct {
			FIDBonus *string `json:"fid_bonus"`
		}
		ts.call(t, "GET", "/api/v1/selections/"+created.ID, nil, &got)
		for _, b := range []*string{created.FIDBonus, got.FIDBonus} {
			switch {
			case c.want == "" && b != nil:
				t.Errorf("%s: fid_bonus %q, want none", c.name, *b)
			case c.want != "" && (b == nil || *b != c.want):
				t.Errorf("%s: fid_bonus %v, want %s", c.name, b, c.want)
			}
		}
	}
	for _, c := range []struct{ name, body, say string }{
		{"unknown form", fmt.Sprintf(`{"generators":["a","b"],"ref":%q,"fid_bonus":"eq10"}`, up["id"]), `"eq10": want auto, paper, code2024 or fducb2025`},
		{"empty", fmt.Sprintf(`{"generators":["a","b"],"ref":%q,"fid_bonus":""}`, up["id"]), `"": want auto`},
		{"for is", `{"score":"is","classes":3,"generators":["a","b"],"fid_bonus":"paper"}`, "is for"},
		{"not a string", fmt.Sprintf(`{"generators":["a","b"],"ref":%q,"fid_bonus":1}`, up["id"]), "fid_bonus"},
	} {
		var e struct{ Error, Field string }
		code, raw := ts.call(t, "POST", "/api/v1/selections", c.body, &e)
		if code != 400 || e.Field != "fid_bonus" || !strings.Contains(e.Error, "fid_bonus") || !strings.Contains(e.Error, c.say) || strings.Contains(e.Error, "\n") {
			t.Errorf("%s: %d %s, want a one-line 400 on fid_bonus saying %q", c.name, code, raw, c.say)
		}
	}
}
