package imagejob

import (
	"context"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/genlens/genlens/job"
)

// With both paths bad, the error names the real side, the first given.
func TestCompareNamesRealFirst(t *testing.T) {
	req := NewCompareRequest()
	req.Real, req.Fake = "no-real.npy", "no-fake.npy"
	_, err := Compare(context.Background(), job.Env{FS: fstest.MapFS{}}, req)
	if err == nil || !strings.Contains(err.Error(), "no-real.npy") || strings.Contains(err.Error(), "no-fake.npy") {
		t.Errorf("error %v, want one naming no-real.npy", err)
	}
}
