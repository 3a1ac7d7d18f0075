package inception

import (
	"math/big"
	"math/rand/v2"
	"testing"
)

// TestToomCook checks the exact matrices of every one-dimensional form
// the network uses: Aᵀ[(G g) ⊙ (Bᵀ d)] is the correlation of d with g
// in rational arithmetic, and Bᵀ and Aᵀ have the symmetric form the
// transforms of simdblas assume (they read only half of each pair).
func TestToomCook(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for r, f := range winograd1dForms {
		m, a := f.m, f.m+r-1
		bt, g, at := toomCook(m, r, f.points)
		for trial := range 5 {
			gv, dv := make([]*big.Rat, r), make([]*big.Rat, a)
			for k := range gv {
				gv[k] = big.NewRat(rng.Int64N(41)-20, rng.Int64N(7)+1)
			}
			for k := range dv {
				dv[k] = big.NewRat(rng.Int64N(41)-20, rng.Int64N(7)+1)
			}
			prod := make([]*big.Rat, a)
			for e := range a {
				u, v := new(big.Rat), new(big.Rat)
				for k := range r {
					u.Add(u, new(big.Rat).Mul(g[e][k], gv[k]))
				}
				for k := range a {
					v.Add(v, new(big.Rat).Mul(bt[e][k], dv[k]))
				}
				prod[e] = u.Mul(u, v)
			}
			for i := range m {
				got, want := new(big.Rat), new(big.Rat)
				for e := range a {
					got.Add(got, new(big.Rat).Mul(at[i][e], prod[e]))
				}
				for k := range r {
					want.Add(want, new(big.Rat).Mul(gv[k], dv[i+k]))
				}
				if got.Cmp(want) != 0 {
					t.Fatalf("F(%d, %d) trial %d: output %d is %v, want %v", m, r, trial, i, got, want)
				}
			}
		}
		neg := func(x *big.Rat) *big.Rat { return new(big.Rat).Neg(x) }
		for k := range a {
			if k%2 == 1 && bt[0][k].Sign() != 0 || k%2 == 0 && bt[a-1][k].Sign() != 0 {
				t.Errorf("F(%d, %d): Bᵀ's row 0 or ∞ has column %d", m, r, k)
			}
			for e := 1; e < a-1; e += 2 {
				want := bt[e][k]
				if k%2 == 1 {
					want = neg(want)
				}
				if bt[e+1][k].Cmp(want) != 0 || k == a-1 && bt[e][k].Sign() != 0 {
					t.Errorf("F(%d, %d): Bᵀ's rows %d and %d are not mirrored in column %d", m, r, e, e+1, k)
				}
			}
		}
		for i := range m {
			if i%2 == 1 && at[i][0].Sign() != 0 || i != m-1 && at[i][a-1].Sign() != 0 {
				t.Errorf("F(%d, %d): Aᵀ's row %d has a column of 0 or ∞", m, r, i)
			}
			for e := 1; e < a-1; e += 2 {
				want := at[i][e]
				if i%2 == 1 {
					want = neg(want)
				}
				if at[i][e+1].Cmp(want) != 0 {
					t.Errorf("F(%d, %d): Aᵀ's columns %d and %d are not mirrored in row %d", m, r, e, e+1, i)
				}
			}
		}
	}
}
