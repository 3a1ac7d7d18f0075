// Package disentangle finds which region of an image a generator gets
// wrong, with the disentangled mean embeddings of Gruber, Ziegler and
// Buettner, "Disentangling Mean Embeddings for Better Diagnostics of Image
// Generators" (arXiv preprint, 2024).
//
// The image kernel is the RBF kernel exp(-gamma ||x - y||²) on flattened
// images, which is the product over pixels of the same RBF kernel on each
// pixel's channel values. When groups of pixels are mutually independent,
// the mean embedding of the image distribution is the tensor product of
// the groups' mean embeddings, and the cosine similarity of mean
// embeddings (CMS) of two distributions factors into the product of the
// groups' CMS values (Theorem 1). So a drop of the image-wise CMS can be
// traced to the region whose own CMS dropped.
//
// The pipeline (Algorithm 1, Analyze):
//
//  1. PixelCKA: centred kernel alignment (HSIC normalised, Eq. 11-13)
//     between every pair of pixels on the training images, in mini-batches
//     of 100 images, averaged. It is computed as V Vᵀ over normalised,
//     centred per-pixel Gram matrices: one BLAS product per batch instead
//     of the P² separate CKAs of the authors' code.
//  2. Hierarchical clustering of the pixels (package cluster) on the
//     Euclidean distance between rows of the CKA matrix, average linkage,
//     cut into k clusters.
//  3. Compare: image-wise CMS and MMD² between real test images and each
//     generated set, the CMS of each cluster's pixels alone with the same
//     gamma, and the product of the cluster values, which should match
//     the image-wise CMS when the clusters are independent.
//
// HSIC, HSICUnbiased, CKA and CKAUnbiased work on any pair of Gram
// matrices, e.g. for comparing two network representations of the same
// examples with Kornblith et al.'s (2019) conventions (KornblithRBF).
//
// Estimators follow the paper: HSIC without Gretton's 1/(n-1)² factor (it
// cancels in CKA), mean embeddings as V-statistics with the diagonal
// included (Appendix B.2), so the MMD² here is the biased estimate.
//
// The package does no I/O; images come in as rows of a *mat.Dense, scaled
// by the caller (package imageio scales to [-1, 1] as the authors do).
package disentangle
