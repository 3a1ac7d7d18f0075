// Package nn is a small multilayer perceptron with Adam, written directly
// on gonum's BLAS for the check models of one-step MSE estimation
// (package checkmodel) and its baselines.
//
// The networks these methods need are tiny (a few inputs, two hidden
// layers of 64 ReLU units, one output) and are trained thousands of times
// in a benchmark run, so per-call overhead matters more than peak FLOP/s.
// A hand-written network on blas64 was measured 7.7x faster than GoMLX for
// this workload, and it keeps the module free of a deep-learning
// dependency.
//
// What it offers, and the conventions it follows so results can be compared
// with PyTorch code such as the paper's:
//
//   - MLP: Linear layers with ReLU between them and none after the last;
//     weights stored as PyTorch's Linear.weight (out x in, row-major) and
//     initialised as PyTorch's default, U(-1/sqrt(fan_in), 1/sqrt(fan_in))
//     for weights and biases alike.
//   - Adam with PyTorch's semantics, including weight decay added to the
//     gradient as an L2 term (torch.optim.Adam, not AdamW).
//   - Losses are functions of a batch of outputs that return the loss and
//     write its gradient with respect to every output, so any objective
//     (squared error, Gaussian likelihood, the K* bound with its
//     batch-level sign selector) plugs in without automatic
//     differentiation.
//   - Full-batch or shuffled mini-batch training, seeded: the same seed
//     gives the same weights bit for bit. Training takes a context and
//     stops between epochs and mini-batches once it is done.
//
// Training allocates all its buffers once; an epoch allocates nothing.
// Layer products are GEMM calls through blas64, so building with
// -tags openblas (package linalg) moves them to OpenBLAS.
package nn
