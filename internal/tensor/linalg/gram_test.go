package linalg

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

func TestGramAndCross(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	x := mat.NewDense(7, 5, nil)
	y := mat.NewDense(4, 5, nil)
	for _, m := range []*mat.Dense{x, y} {
		rows, cols := m.Dims()
		for i := 0; i < rows; i++ {
			for j := 0; j < cols; j++ {
				m.Set(i, j, r.NormFloat64())
			}
		}
	}
	// A view with stride > cols must work too.
	view := x.Slice(1, 6, 0, 5).(*mat.Dense)
	g, c := Gram(view), Cross(view, y)
	sq := RowSqNorms(view)
	for i := 0; i < 5; i++ {
		for j := 0; j < 5; j++ {
			if want := mat.Dot(view.RowView(i), view.RowView(j)); math.Abs(g.At(i, j)-want) > 1e-12 {
				t.Errorf("Gram[%d][%d] = %v, want %v", i, j, g.At(i, j), want)
			}
		}
		for j := 0; j < 4; j++ {
			if want := mat.Dot(view.RowView(i), y.RowView(j)); math.Abs(c.At(i, j)-want) > 1e-12 {
				t.Errorf("Cross[%d][%d] = %v, want %v", i, j, c.At(i, j), want)
			}
		}
		if math.Abs(sq[i]-g.At(i, i)) > 1e-12 {
			t.Errorf("RowSqNorms[%d] = %v, want %v", i, sq[i], g.At(i, i))
		}
	}
}

func TestBackendNamed(t *testing.T) {
	if b := Backend(); !strings.Contains(b, "gonum") && !strings.Contains(b, "openblas") && !strings.Contains(b, "simdblas") {
		t.Errorf("Backend() = %q", b)
	}
	t.Logf("backend: %s", Backend())
}

func TestSetThreads(t *testing.T) {
	prev := SetThreads(1)
	defer SetThreads(prev)
	got := SetThreads(2)
	want := 0 // gonum's own BLAS has nothing to set
	if strings.HasPrefix(Backend(), "openblas") || strings.HasPrefix(Backend(), "simdblas") {
		want = 1
	}
	if got != want {
		t.Errorf("SetThreads returned %d after SetThreads(1), want %d (backend %s)", got, want, Backend())
	}
}
