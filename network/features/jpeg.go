package features

import (
	"bytes"
	"fmt"
)

// MaxJPEGScans bounds the scans (SOS segments) of a JPEG file. A
// progressive JPEG refines its image scan by scan, and the standard sets
// no limit, so a file of 66 KB that repeats a cheap scan 20,000 times
// costs minutes of decoding. Encoders write few: libjpeg's default
// progression has 10 scans for colour and 6 for grey, and libjpeg-turbo's
// maintainers judged a real image needing more than 100 hard to imagine
// when they chose a scan limit for the same attack. 500 is well past any
// of them.
const MaxJPEGScans = 500

// maxScanPixels bounds scans × pixels, the decoding work of a
// progressive JPEG: each scan passes over every block of the image (Go's
// decoder spends about 12 ms on a 16-byte scan of a 2048x2048 image), so
// large images get fewer scans than MaxJPEGScans, and never fewer than
// minJPEGScans. 2^30 is 64 scans of the largest image genlens reads
// (MaxImagePixels), about 3 s of decoding at that rate.
const (
	maxScanPixels = 1 << 30
	minJPEGScans  = 64
)

// jpegScanLimit returns the scans a JPEG of the given pixels may have.
func jpegScanLimit(pixels int64) int {
	return int(min(MaxJPEGScans, max(minJPEGScans, maxScanPixels/max(pixels, 1))))
}

// tooManyScans is the error of a JPEG over its scan limit.
type tooManyScans struct{ limit int }

func (e *tooManyScans) Error() string {
	return fmt.Sprintf("more than %d scans for its size (a progressive JPEG that repeats scans costs minutes to decode; encoders write about 10)", e.limit)
}

// jpegScans counts the scans of the JPEG file data by walking its
// markers, without decoding: a segment's length is skipped, a scan's
// entropy-coded data is skipped to the next marker (a 0xFF not followed
// by a stuffed 0x00, a restart marker or another 0xFF). It stops with a
// *tooManyScans error past limit scans, and at the EOI marker or the end
// of the data; a malformed stream is left to the decoder to report.
func jpegScans(data []byte, limit int) (int, error) {
	if len(data) < 2 || data[0] != 0xff || data[1] != 0xd8 { // SOI
		return 0, nil
	}
	scans := 0
	i := 2
	for {
		// A marker: 0xFF (fill bytes may repeat it), then its code.
		j := bytes.IndexByte(data[i:], 0xff)
		if j < 0 {
			return scans, nil // garbage between segments: the decoder's business
		}
		i += j
		for i < len(data) && data[i] == 0xff {
			i++
		}
		if i >= len(data) {
			return scans, nil
		}
		m := data[i]
		i++
		switch {
		case m == 0xd9: // EOI
			return scans, nil
		case m == 0x00, m == 0x01, m >= 0xd0 && m <= 0xd7: // no length
			continue
		}
		if i+2 > len(data) {
			return scans, nil
		}
		n := int(data[i])<<8 | int(data[i+1])
		if n < 2 || i+n > len(data) {
			return scans, nil
		}
		i += n
		if m != 0xda { // not SOS
			continue
		}
		if scans++; scans > limit {
			return scans, &tooManyScans{limit}
		}
		// Entropy-coded data up to the next marker, left unread.
		for {
			j := bytes.IndexByte(data[i:], 0xff)
			if j < 0 || i+j+1 >= len(data) {
				return scans, nil
			}
			i += j
			if d := data[i+1]; d == 0x00 || d >= 0xd0 && d <= 0xd7 {
				i += 2
				continue
			}
			break // i is at the 0xFF of the next marker
		}
	}
}
