package frechet

// NumPyPermutation returns the permutation of 0..n-1 that NumPy's legacy
// generator gives for numpy.random.RandomState(seed).permutation(n):
// a Mersenne Twister (MT19937) seeded as init_genrand does, and a
// Fisher-Yates shuffle from the last element down, each index drawn by
// masking 32-bit outputs to the next power of two and rejecting values
// above the bound. torch-fidelity shuffles the rows of its Inception
// Score with RandomState(2020) before splitting; this reproduces its
// order.
func NumPyPermutation(n int, seed uint32) []int {
	p := make([]int, n)
	for i := range p {
		p[i] = i
	}
	mt := newMT19937(seed)
	for i := n - 1; i >= 1; i-- {
		j := mt.interval(uint32(i))
		p[i], p[j] = p[j], p[i]
	}
	return p
}

// TorchFidelityISSeed is the seed of torch-fidelity's Inception Score
// shuffle (its rng_seed default).
const TorchFidelityISSeed = 2020

// mt19937 is Matsumoto and Nishimura's 32-bit Mersenne Twister.
type mt19937 struct {
	mt [624]uint32
	i  int
}

func newMT19937(seed uint32) *mt19937 {
	m := &mt19937{i: 624}
	m.mt[0] = seed
	for i := 1; i < 624; i++ {
		m.mt[i] = 1812433253*(m.mt[i-1]^(m.mt[i-1]>>30)) + uint32(i)
	}
	return m
}

// next returns the next tempered 32-bit output.
func (m *mt19937) next() uint32 {
	if m.i >= 624 {
		for k := 0; k < 624; k++ {
			y := m.mt[k]&0x80000000 | m.mt[(k+1)%624]&0x7fffffff
			v := m.mt[(k+397)%624] ^ y>>1
			if y&1 != 0 {
				v ^= 0x9908b0df
			}
			m.mt[k] = v
		}
		m.i = 0
	}
	y := m.mt[m.i]
	m.i++
	y ^= y >> 11
	y ^= y << 7 & 0x9d2c5680
	y ^= y << 15 & 0xefc60000
	y ^= y >> 18
	return y
}

// interval returns a uniform integer in [0, max] by masked rejection.
func (m *mt19937) interval(max uint32) uint32 {
	if max == 0 {
		return 0
	}
	mask := max
	mask |= mask >> 1
	mask |= mask >> 2
	mask |= mask >> 4
	mask |= mask >> 8
	mask |= mask >> 16
	for {
		if v := m.next() & mask; v <= max {
			return v
		}
	}
}
