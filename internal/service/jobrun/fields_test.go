package jobrun

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/genlens/genlens/dataio"
	"github.com/genlens/genlens/internal/store/records"
)

// A job's errors and warnings name request fields, never the command
// line's flags: a client of the service sets pools_key, not --pools-key.
func TestErrorsNameFields(t *testing.T) {
	s := newTestService(t, nil, Config{Workers: 1})
	two := encoded(t, func(w io.Writer) error {
		a := &dataio.Array{Shape: []int{20, 3}, Data: make([]float64, 60)}
		return dataio.EncodeNPZ(w, map[string]*dataio.Array{"a": a, "b": a}, false)
	})
	pool := upload(t, s, "pool.npz", two)
	ref := upload(t, s, "ref.npy", npy(t, []int{20, 3}, make([]float64, 60)))
	body := `{"pools":["` + pool + `","` + pool + `"],"ref":"` + ref + `","steps":5,"batch":2,"trials":1}`
	j, err := s.Submit(context.Background(), "select", []byte(body))
	if err != nil {
		t.Fatal(err)
	}
	j = waitJob(t, s, j.ID, time.Minute)
	if j.Status != records.StatusFailed || !strings.Contains(j.Error, "choose one with pools_key") || strings.Contains(j.Error, "--") {
		t.Errorf("status %s, error %q: want a failure naming pools_key", j.Status, j.Error)
	}
}
