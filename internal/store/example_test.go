package store_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/genlens/genlens/internal/store"
	"github.com/genlens/genlens/internal/store/records"
)

// A monitor's rows go in as one batch and come back in chunk order; a
// label fills in its row's realised squared error.
func ExampleOpen() {
	dir, _ := os.MkdirTemp("", "genlens-example")
	defer os.RemoveAll(dir)
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(dir, "genlens.db")) // or a postgres:// URL
	if err != nil {
		fmt.Println(err)
		return
	}
	defer db.Close()
	m := &records.Monitor{Name: "prices", Model: []byte(`{"format":"genlens-checkmodel/1"}`), ChunkSize: 100}
	if err := db.CreateMonitor(ctx, m); err != nil {
		fmt.Println(err)
		return
	}
	err = db.InsertRows(ctx, m.ID, []records.Row{
		{ID: "r1", Features: []float64{1.5, 0}, Prediction: 3.2, Estimate: 0.5},
		{ID: "r2", Features: []float64{0.5, 1}, Prediction: 1.0, Estimate: 0.25},
	})
	fmt.Println("insert:", err)
	fmt.Println("again:", db.InsertRows(ctx, m.ID, []records.Row{{ID: "r2", Features: []float64{0, 0}}}))
	db.SetLabels(ctx, m.ID, []records.Label{{ID: "r1", Target: 3.0}})
	s, _ := db.Series(ctx, m.ID, false)
	fmt.Printf("estimates %v, realised %.2f and %v\n", s.Estimates, s.Realized[0], s.Realized[1])
	// Output:
	// insert: <nil>
	// again: rows[0]: row id "r2" is stored already
	// estimates [0.5 0.25], realised 0.04 and NaN
}
