package frechet

import "testing"

// Parts of one shard count have one Key exactly when Compatible finds
// nothing different, so that the service and `stats merge` accept the
// same sets of parts.
func TestKeyAgreesWithCompatible(t *testing.T) {
	base := Part{N: 3, Mean: []float64{1, 2}, Shards: 4, Listing: Listing{Kind: "features", Count: 10, Cols: 2, SHA256: "abc"},
		Prov: Provenance{Embedder: "features", Dims: "2"}}
	for name, change := range map[string]func(p *Part){
		"same":       func(p *Part) { p.Shard, p.N = 2, 7 },
		"listing":    func(p *Part) { p.Listing.SHA256 = "abd" },
		"count":      func(p *Part) { p.Listing.Count = 11 },
		"provenance": func(p *Part) { p.Prov.Weights = "f00" },
		"mode":       func(p *Part) { p.Prov.Mode = "clean" },
		"dimension":  func(p *Part) { p.Mean = []float64{1, 2, 3} },
	} {
		q := base
		change(&q)
		if same, compatible := base.Key() == q.Key(), base.Compatible(&q) == ""; same != compatible {
			t.Errorf("%s: equal keys %v, Compatible %q", name, same, base.Compatible(&q))
		}
	}
}
