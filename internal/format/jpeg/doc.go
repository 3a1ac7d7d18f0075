// Package jpeg decodes baseline, extended and progressive JPEG files to
// 8-bit RGB, matching bit for bit what Pillow returns for
// Image.open(f).convert("RGB") with its default settings.
//
// The reference is Debian bookworm's Pillow 9.4.0 linked against
// libjpeg-turbo 2.1.5 (jpeg62 API), which decodes with
//
//   - the accurate integer inverse DCT (JDCT_ISLOW, jidctint.c),
//   - "fancy" upsampling: the triangular h2v1, h1v2 and h2v2 filters of
//     jdsample.c for components subsampled by two, and plain replication
//     for every other integral ratio (4:1:1, h=3, ...); merged upsampling
//     (jdmerge.c) is never used because Pillow leaves do_fancy_upsampling
//     set,
//   - the YCbCr to RGB tables of jdcolor.c (16-bit fixed point, rounded),
//   - libjpeg-turbo's guess of the colour space from the JFIF and Adobe
//     markers and the component identifiers.
//
// Greyscale images come back with R = G = B. Four-component images are
// CMYK or YCCK (Adobe transform 2); like Pillow, the decoded CMYK values are
// taken to be Adobe-inverted and turned into RGB with Pillow's cmyk2rgb
// formula, R = k - k·(255-c)/255 rounded as Pillow rounds. EXIF orientation
// is not applied, nor are ICC profiles.
//
// Both Huffman and arithmetic entropy coding are decoded, sequential and
// progressive, with restart intervals. Twelve-bit samples, lossless and
// hierarchical JPEG are refused, as Pillow and libjpeg-turbo 2.1 refuse
// them. (Pillow 9.4 itself fails with "broken data stream" on
// arithmetic-coded files longer than its 64 KiB read block, because
// libjpeg-turbo's arithmetic decoder cannot suspend; this package decodes
// them as djpeg does.)
//
// The inverse DCT saturates its output to [0, 255] as libjpeg-turbo's
// SIMD code (which Debian's build runs) does; its C code instead wraps
// values beyond ±512, which only corrupt coefficients can produce.
//
// The decoder is stricter than libjpeg-turbo about damaged data. Where
// libjpeg-turbo prints a warning and goes on to produce pixels that the file
// does not describe (entropy-coded data that ends early, an invalid Huffman
// code, a missing restart marker, an impossible progression), Decode returns
// an error instead of an image, so a damaged file is never silently turned
// into grey blocks. A file that ends before its EOI marker is refused as
// truncated, as Pillow refuses it unless ImageFile.LOAD_TRUNCATED_IMAGES is
// set. For the same reason a progressive file whose scans leave any of the
// first nine AC coefficients unrefined, which libjpeg-turbo would finish
// with its block-smoothing filter, is refused.
//
// Arithmetic-coded data that runs into a marker is padded with zeros,
// which T.81 makes legal (encoders drop trailing zero bytes), so an
// arithmetic-coded scan cut short just before a marker cannot be told from
// a complete one; libjpeg-turbo cannot tell either. Cut short at the end of
// the input, it is refused.
//
// Work is bounded: Options limits the pixel count before any large
// allocation and the number of scans, and for Huffman coding (where every
// block costs at least one bit) the number of blocks is checked against
// the length of the input, so a short file cannot claim a huge image.
package jpeg
