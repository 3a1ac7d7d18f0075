// Package features turns folders of images into feature vectors: it
// lists the images (png, jpg/jpeg, bmp, tif/tiff, webp, ppm and pgm, any
// case, sorted by path as Python's sorted() orders the names pytorch-fid
// globs, optionally recursive; non-regular files refused before they are
// opened), decodes them (DecodeImage, headers checked before pixels)
// into the 8-bit RGB that PIL's Image.open(f).convert("RGB") gives, bit
// for bit, and keeps the features of single images in a cache on disk.
//
// # Pixels as PIL reads them
//
// pytorch-fid, torch-fidelity and clean-fid read images with PIL, so
// their numbers depend on PIL's decoders. JPEG is decoded by package
// internal/format/jpeg (libjpeg-turbo's integer IDCT, fancy upsampling and
// colour tables), WebP by internal/format/webp (libwebp's upsampling and
// colour conversion for lossy files), PGM and PPM by internal/format/pnm,
// and PNG, BMP and TIFF by the Go decoders with PIL's conversions where
// they differ: 16-bit greyscale clipped at 255 (PIL's mode "I"), palette
// indices past the palette grey, premultiplied TIFF alpha undone with
// PIL's truncation. testdata/pil_images.py writes images of every mode
// and asks Pillow 9.4 for their pixels; TestPILRandom compares them all,
// TestPILFixtures the small set kept in testdata/pil. Greyscale-with-alpha
// and CMYK TIFF files, animated WebP and plain (ASCII) PGM/PPM are
// refused rather than decoded differently.
//
// # Memory
//
// An image is priced from its header before its pixels are decoded
// (DecodedBytes: width × height × the bytes a pixel of its decoded form
// takes, plus its RGB copy and float planes), since a 130 KB PNG may
// decode into 134 MB (16-bit RGBA, 4096²). Decode and the Pipeline admit
// every image through package membudget: one over the budget is refused
// with its price and the setting that raises it, and the images a
// Pipeline's workers decode at once hold at most the budget together.
// The Pipeline's workers are capped at the CPUs (Workers).
//
// # Feature cache
//
// Cache keeps the features of single images, keyed by the SHA-256 of each
// image file and by the Settings that decide them (embedder,
// preprocessing, output, dimension, SHA-256 of the weights), under
// CacheDir ($GENLENS_CACHE, else os.UserCacheDir()/genlens, where the
// Inception weights are cached too). The pipeline reads it before
// decoding an image and fills it after the network, so a second
// comparison against the same real folder skips the network.
package features
