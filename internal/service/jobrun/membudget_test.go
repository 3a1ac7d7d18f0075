package jobrun

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/genlens/genlens/fault"
	"github.com/genlens/genlens/internal/store/records"
)

// Two rows of 30,000 features, a 480 KB upload, ask for a 7.2 GB
// covariance: a stats job and an FID selection on it fail as bad input
// (422) naming the budget, and the service keeps running.
func TestWideFeaturesOverTheMatrixBudget(t *testing.T) {
	s := newTestService(t, nil, Config{Workers: 1})
	ctx := context.Background()
	r := rand.New(rand.NewPCG(3, 4))
	wide := upload(t, s, "wide.npy", npy(t, []int{2, 30000}, normal(r, 2, 30000, 0, 1)))
	j, err := s.Submit(ctx, "stats", []byte(`{"in":"`+wide+`"}`))
	if err != nil {
		t.Fatal(err)
	}
	j = waitJob(t, s, j.ID, 30*time.Second)
	if j.Status != records.StatusFailed || j.ErrorKind != "input" || !strings.Contains(j.Error, "matrix_budget_mb") {
		t.Errorf("stats: %s %s %q, want failed, input, naming matrix_budget_mb", j.Status, j.ErrorKind, j.Error)
	}
	cfg, _ := json.Marshal(map[string]any{"score": "fid", "generators": []string{"a", "b"}, "ref": wide})
	_, err = s.CreateSelection(ctx, cfg)
	if fault.Classify(err) != fault.KindInput || !strings.Contains(err.Error(), "the covariance of the features: a 30000 × 30000 matrix") {
		t.Errorf("fid selection: err = %v (%v), want an input error over the budget", err, fault.Classify(err))
	}
	// The service still runs jobs.
	j2, _ := s.Submit(ctx, "mse-bench", []byte(`{"dataset":"synthetic-a","trials":1,"methods":["naive"]}`))
	if j2 = waitJob(t, s, j2.ID, 30*time.Second); j2.Status != records.StatusSucceeded {
		t.Errorf("the next job: %s %q", j2.Status, j2.Error)
	}
}
