// Package transformer holds what the transformer networks (vit, bert,
// deberta) share, so that it is written and checked once:
//
//   - Loader takes a network's named tensors out of a state dict
//     (weights.Load, weights.LoadKeys), checking every shape, and
//     refuses a missing tensor and a non-finite value (NaN, ±Inf) with a
//     one-line *fault.InputError naming the file, the tensor and the
//     element.
//   - Linear is nn.Linear, y = W·x + b, on activations laid out features
//     × tokens; its weight is packed for the SGEMM kernel where that
//     runs.
//   - Norm is nn.LayerNorm: its weight, bias and epsilon.
//
// A LayerNorm normalises a column to values of magnitude at most
// √(n−1) (n the width), so its output is at most √(n−1)·|weight| +
// |bias| element by element. Loader.Norm refuses weights for which that
// bound passes half of float32's range (a weight of 3e38, say): such a
// norm would turn a finite input into ±Inf, and the next layer into NaN.
// A finite weight elsewhere can still overflow a product (a 3e38 in a
// classifier): each network passes what it returns through CheckOutput,
// which turns a NaN or ±Inf there into an error naming the weights
// rather than a vector that poisons every score computed from it.
//
// Nothing here changes a network's arithmetic: the order of every sum
// is the one the networks had when each kept its own copy (their golden
// bits, internal/testkit/goldenbits, pin it).
package transformer
