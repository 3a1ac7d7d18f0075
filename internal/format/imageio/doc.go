// Package imageio reads sets of images for the pixel-cluster diagnostics
// (package disentangle); package chart draws their cluster map.
//
// A set comes from a NumPy file (.npy, .npz, optionally gzipped), a
// numeric CSV (one flattened image per row) or a folder of PNG files, and
// becomes one row per image, pixel by pixel in row-major order with a
// pixel's channels adjacent (disentangle.Grid's layout), scaled to
// [-1, 1] — the authors' preprocessing (torchvision ToTensor then
// Normalize(0.5, 0.5)).
//
// # Shapes
//
//   - (N, H, W): grey images.
//   - (N, H, W, C) with C in 1..4: channels last (NumPy, TensorFlow).
//   - (N, C, H, W) with C in 1..4 and W not: channels first (PyTorch);
//     transposed to channels last.
//   - (N, D): flattened images; Options.Shape (the CLI's --shape HxW or
//     HxWxC) says how to unflatten them, and without it D must be a
//     perfect square (square grey images).
//   - A folder: every *.png in it, in name order, all of one size; grey
//     PNGs (colour type 0, as their header says) give C = 1, any other
//     PNG makes the set RGB (C = 3; alpha is dropped).
//
// # Pixel range
//
// Options.Range maps [Lo, Hi] to [-1, 1]. Left unset it is detected from
// the values of each file: within [-1, 1] with a negative value: already
// scaled; within [0, 1]: [0, 1]; within [0, 255]: 8-bit [0, 255]; within
// [0, 65535]: 16-bit. PNG files use their bit depth. The median-bandwidth
// RBF kernel of disentangle is invariant to one affine map applied to all
// sets, so the detected range only matters when sets come in different
// scales (say, uint8 training images and tanh outputs of a generator in
// [-1, 1]) or with an explicit gamma; Set.Range reports what was used.
//
// A folder's PNG files are decoded by features.DecodeImage, the decoder
// of every image file genlens reads (headers checked before pixels).
//
// # Memory
//
// A set's matrix takes N × H × W × C × 8 bytes. A folder's headers are
// read first, and the matrix is priced against the matrix memory budget
// (package membudget) before it is allocated; each image is then
// admitted at its decoded price, copied into its row and dropped. Over
// the budget the read is refused with a one-line error naming the figure
// and what to change (fewer or smaller images, or the budget). An
// array's values become the matrix itself (dataio priced them as it read
// them); channels first, their copy channels last is priced likewise.
//
// Every problem with the bytes a user brought is a *fault.InputError
// naming the file (and image or pixel), so the CLI exits with code 2.
package imageio
