// Package manifold estimates how well generated samples cover the real
// data, and how much of them lies on it, from k-nearest-neighbour balls
// around feature rows: precision and recall (Kynkäänniemi et al.,
// "Improved Precision and Recall Metric for Assessing Generative Models",
// NeurIPS 2019) and density and coverage (Naeem et al., "Reliable
// Fidelity and Diversity Metrics for Generative Models", ICML 2020), as
// the latter's compute_prdc computes them (clovaai/generative-evaluation-prdc).
//
// # Definitions
//
// Every real row x_i gets the radius r_i: its Euclidean distance to its
// k-th nearest real neighbour, that is, the (k+1)-th smallest distance
// from x_i to the real rows counting x_i itself at distance 0 (so a
// duplicate of x_i is a neighbour at distance 0). Fake rows y_j get radii
// s_j among the fake rows in the same way. With strict comparisons:
//
//	precision = fraction of fake j with d(x_i, y_j) < r_i for some i
//	recall    = fraction of real i with d(x_i, y_j) < s_j for some j
//	density   = (1/k) · mean over fake j of #{i : d(x_i, y_j) < r_i}
//	coverage  = fraction of real i with d(x_i, y_j) < r_i for some j
//
// # Computation
//
// Distances are float64. They are never held as an n×m matrix: blocks of
// rows are multiplied with one GEMM each (‖x‖² + ‖y‖² − 2 x·y), and every
// decision taken from a block is exact. A block's squared distances come
// with a bound on their rounding error; a radius takes the k+1 smallest
// squared distances computed directly (Σ (x_k − y_k)², in order), and a
// comparison with a radius that the bound cannot settle is recomputed the
// same way. So ties (duplicate rows, points on a lattice, a fake row at
// exactly a radius) are decided as the plain definition decides them, and
// the result does not depend on the GEMM's summation order or on the
// number of goroutines. The bound grows with the rows' norms, so rows
// with a large common offset (norms far above their distances) send more
// decisions to the direct computation: slower, never different. Memory is the two inputs plus one block per
// goroutine and O((k+1)·n) for the radii; time is about (n² + m²)/2 + n·m
// times d multiply-adds (the upper triangles of real×real and fake×fake,
// all of real×fake), in blocks spread over the CPUs.
package manifold
