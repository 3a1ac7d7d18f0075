// Package dataio reads and writes the files genlens users bring and the
// artifacts it produces: NumPy .npy/.npz arrays, numeric CSV tables, JSON
// Lines or Parquet files of sampled LLM answers, and JSON reports.
//
// Readers validate what they read, because every later stage (kernels,
// covariances, eigenvalues) turns one bad value into a silently wrong
// score: NaN and ±Inf, ragged rows, wrong ranks, empty inputs, unsupported
// dtypes, truncated files and malformed headers are all reported as an
// *InputError naming the file, the line or row, and the field, so the CLI
// can print one line and exit with code 2. No input, however corrupt,
// makes a reader panic; fuzz tests (FuzzReadNPY, FuzzReadJSONL,
// FuzzReadCSV, FuzzReadTable) check it.
//
// Writers write to a temporary file in the target directory and rename it
// into place, so a failed or interrupted write never leaves a half-written
// file where a good one was.
//
// The package does no printing and no flag parsing.
//
// # Why not npyio
//
// github.com/sbinet/npyio is the maintained Go NPY library, but it does
// not fit here. Its header reader cuts the header at the last newline and
// between key substrings without bounds checks, so a corrupt header, or
// merely a valid one whose keys are not in numpy's usual order, panics
// with "slice bounds out of range" instead of returning an error (checked
// against v0.6.0); it allocates a version 2 header of any declared length
// (up to 4 GiB) before reading it; it honours Fortran order only when
// reading into a rank-2 mat.Dense, while stacks are rank 3; and its errors
// cannot say which row and column of which file holds a NaN. The NPY
// format is small (a magic string, a length, a Python dict literal, raw
// data), so this package parses it itself with a strict literal parser
// and explicit limits, and uses archive/zip for .npz. Parquet, by
// contrast, is far too large to reimplement: github.com/parquet-go/parquet-go
// reads it, with any panic on a corrupt file recovered into an InputError.
//
// # Formats
//
//   - .npy: format versions 1.0, 2.0 and 3.0; dtypes float16/32/64 and
//     signed or unsigned integers of 1, 2, 4 or 8 bytes, either byte
//     order; C or Fortran order (Fortran data is transposed into C order).
//     Everything becomes float64 in C order. Integers above 2^53 lose
//     precision. NaN checks apply to float dtypes only.
//   - .npz: stored or deflate-compressed zip of .npy members; pick one by
//     ReadOptions.Key, or the only one.
//   - .csv: numbers only (ReadCSV), header row auto-detected, blank and
//     '#' lines skipped; or text cells parsed per column on demand
//     (ReadTable: numbers with missing values, timestamps, columns by
//     name), for production logs.
//   - .jsonl / .json / .parquet: one Record per object or row.
//
// Files ending in ".gz" (.npy.gz, .csv.gz, .jsonl.gz) are decompressed on
// the fly.
package dataio
