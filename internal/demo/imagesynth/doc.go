// Package imagesynth makes image sets with a known region structure, and
// corrupts images inside a region, for the tests, benchmarks and demo of
// the pixel-cluster diagnostics (package disentangle).
//
// Faces draws schematic grey faces whose five regions (background, hair,
// face, eyes, mouth) are drawn independently: every pixel belongs to
// exactly one region and its value depends only on that region's random
// parameters and its own noise, so the regions are mutually independent,
// as Theorem 1 of Gruber, Ziegler & Buettner assumes, while pixels inside a region are
// strongly dependent. Noise, Blur and Fill change images inside a pixel
// mask only, the way a generator that gets one region wrong would.
//
// Images are rows of a *mat.Dense in [-1, 1], pixel by pixel in row-major
// order with a pixel's channels adjacent (the layout of
// disentangle.Grid). The package does no I/O.
package imagesynth
