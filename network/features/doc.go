// Package features turns folders of images into feature vectors: it
// lists the images (png, jpg/jpeg, bmp, tif/tiff and webp, any case,
// sorted by path as Python's sorted() orders the names pytorch-fid
// globs, optionally recursive; non-regular files refused before they are
// opened), decodes them (DecodeImage, headers checked before pixels)
// into 8-bit RGB as PIL's convert("RGB") does, and keeps the features of
// single images in a cache on disk.
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
