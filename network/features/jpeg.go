package features

import (
	"bufio"
	"fmt"
	"io"
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

// jpegScans counts the scans of the JPEG stream r by walking its markers,
// without decoding: a segment's length is skipped, a scan's entropy-coded
// data is skipped to the next marker (a 0xFF not followed by a stuffed
// 0x00, a restart marker or another 0xFF). It stops with a *tooManyScans
// error past limit scans, and at the EOI marker or the end of the data;
// a malformed stream is left to the decoder to report.
func jpegScans(r io.Reader, limit int) (int, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	next := func() (byte, bool) {
		b, err := br.ReadByte()
		return b, err == nil
	}
	if a, ok := next(); !ok || a != 0xff {
		return 0, nil
	}
	if b, ok := next(); !ok || b != 0xd8 { // SOI
		return 0, nil
	}
	scans := 0
	haveFF := false // a scan's data ended at a marker's 0xFF, already read
	for {
		// A marker: 0xFF (fill bytes may repeat it), then its code.
		if !haveFF {
			b, ok := next()
			if !ok {
				return scans, nil
			}
			if b != 0xff {
				continue // garbage between segments: the decoder's business
			}
		}
		haveFF = false
		m, ok := next()
		for ok && m == 0xff {
			m, ok = next()
		}
		if !ok {
			return scans, nil
		}
		switch {
		case m == 0xd9: // EOI
			return scans, nil
		case m == 0x00, m == 0x01, m >= 0xd0 && m <= 0xd7: // no length
			continue
		}
		var l [2]byte
		if _, err := io.ReadFull(br, l[:]); err != nil {
			return scans, nil
		}
		n := int(l[0])<<8 | int(l[1])
		if n < 2 {
			return scans, nil
		}
		if _, err := br.Discard(n - 2); err != nil {
			return scans, nil
		}
		if m != 0xda { // not SOS
			continue
		}
		if scans++; scans > limit {
			return scans, &tooManyScans{limit}
		}
		// Entropy-coded data up to the next marker, left unread.
		for {
			c, ok := next()
			if !ok {
				return scans, nil
			}
			if c != 0xff {
				continue
			}
			d, err := br.Peek(1)
			if err != nil {
				return scans, nil
			}
			if d[0] == 0x00 || d[0] >= 0xd0 && d[0] <= 0xd7 {
				br.Discard(1)
				continue
			}
			haveFF = true
			break
		}
	}
}
