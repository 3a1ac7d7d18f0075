package jpeg

import (
	"encoding/binary"
	"fmt"
)

// lookBits is the number of bits the fast Huffman lookup examines, as in
// libjpeg-turbo (HUFF_LOOKAHEAD): nearly every code in a real file is this
// short.
const lookBits = 9

// huffTable is a Huffman decoding table built from a DHT segment.
type huffTable struct {
	// lookup holds, for each lookBits-bit prefix, (length<<8 | symbol) of
	// the code it starts with, or 0 when the code is longer.
	lookup [1 << lookBits]uint16
	// maxCode[l] is the largest code of length l, or -1; valPtr[l] is the
	// index in vals of the first code of length l minus that code.
	maxCode [18]int32
	valPtr  [17]int32
	vals    [256]uint8
	// fastAC holds, for each lookBits-bit prefix that contains a whole AC
	// code and its magnitude bits, value<<16 | run<<8 | bits used; 0 when
	// the prefix is too short. Most coefficients decode with one lookup.
	fastAC [1 << lookBits]int32
}

// buildHuff builds a decoding table from the 16 code-length counts and the
// symbols of a DHT table, refusing what libjpeg-turbo refuses: more than
// 256 codes, lengths that do not fit or use the all-ones code, and (for DC
// tables) symbols above 15.
func buildHuff(counts *[16]uint8, symbols []uint8, isDC bool) (*huffTable, error) {
	t := new(huffTable)
	n := 0
	for _, c := range counts {
		n += int(c)
	}
	if n > 256 || n != len(symbols) {
		return nil, fmt.Errorf("jpeg: bad Huffman table (%d codes)", n)
	}
	copy(t.vals[:], symbols)
	if isDC {
		for _, s := range symbols {
			if s > 15 {
				return nil, fmt.Errorf("jpeg: bad Huffman table (DC symbol %d)", s)
			}
		}
	}
	code := int32(0)
	k := int32(0)
	for l := 1; l <= 16; l++ {
		c := int32(counts[l-1])
		// The codes of length l must fit in l bits without using the
		// all-ones code, which T.81 reserves and libjpeg-turbo refuses.
		if c > 0 && code+c >= 1<<l {
			return nil, fmt.Errorf("jpeg: bad Huffman table (code lengths overflow)")
		}
		if c == 0 {
			t.maxCode[l] = -1
		} else {
			t.valPtr[l] = k - code
			for i := int32(0); i < c; i++ {
				if l <= lookBits {
					// Every lookBits-bit prefix that starts with this code.
					shift := uint(lookBits - l)
					base := (code + i) << shift
					e := uint16(l)<<8 | uint16(symbols[k+i])
					for j := int32(0); j < 1<<shift; j++ {
						t.lookup[base+j] = e
					}
				}
			}
			code += c
			k += c
			t.maxCode[l] = code - 1
		}
		code <<= 1
	}
	t.maxCode[17] = 1 << 30
	if !isDC {
		for p := range t.lookup {
			e := t.lookup[p]
			l, sym := uint(e>>8), e&0xff
			r, sz := uint(sym>>4), uint(sym&15)
			if e == 0 || sz == 0 || l+sz > lookBits {
				continue
			}
			v := extend(int32(p>>(lookBits-l-sz))&(1<<sz-1), sz)
			t.fastAC[p] = v<<16 | int32(r<<8) | int32(l+sz)
		}
	}
	return t, nil
}

// stdHuff returns the example tables of T.81 Annex K.3, which libjpeg-turbo
// uses when a scan names a table (0 or 1) that no DHT defined, as Motion
// JPEG frames expect.
func stdHuff(isDC bool, id int) *huffTable {
	type spec struct {
		counts [16]uint8
		vals   []uint8
	}
	var s spec
	switch {
	case isDC && id == 0:
		s = spec{[16]uint8{0, 1, 5, 1, 1, 1, 1, 1, 1}, []uint8{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}}
	case isDC && id == 1:
		s = spec{[16]uint8{0, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1}, []uint8{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}}
	case !isDC && id == 0:
		s = spec{[16]uint8{0, 2, 1, 3, 3, 2, 4, 3, 5, 5, 4, 4, 0, 0, 1, 0x7d}, stdACLuminance}
	case !isDC && id == 1:
		s = spec{[16]uint8{0, 2, 1, 2, 4, 4, 3, 4, 7, 5, 4, 4, 0, 1, 2, 0x77}, stdACChrominance}
	default:
		return nil
	}
	t, err := buildHuff(&s.counts, s.vals, isDC)
	if err != nil {
		panic(err) // the standard tables are valid
	}
	return t
}

var stdACLuminance = []uint8{
	0x01, 0x02, 0x03, 0x00, 0x04, 0x11, 0x05, 0x12,
	0x21, 0x31, 0x41, 0x06, 0x13, 0x51, 0x61, 0x07,
	0x22, 0x71, 0x14, 0x32, 0x81, 0x91, 0xa1, 0x08,
	0x23, 0x42, 0xb1, 0xc1, 0x15, 0x52, 0xd1, 0xf0,
	0x24, 0x33, 0x62, 0x72, 0x82, 0x09, 0x0a, 0x16,
	0x17, 0x18, 0x19, 0x1a, 0x25, 0x26, 0x27, 0x28,
	0x29, 0x2a, 0x34, 0x35, 0x36, 0x37, 0x38, 0x39,
	0x3a, 0x43, 0x44, 0x45, 0x46, 0x47, 0x48, 0x49,
	0x4a, 0x53, 0x54, 0x55, 0x56, 0x57, 0x58, 0x59,
	0x5a, 0x63, 0x64, 0x65, 0x66, 0x67, 0x68, 0x69,
	0x6a, 0x73, 0x74, 0x75, 0x76, 0x77, 0x78, 0x79,
	0x7a, 0x83, 0x84, 0x85, 0x86, 0x87, 0x88, 0x89,
	0x8a, 0x92, 0x93, 0x94, 0x95, 0x96, 0x97, 0x98,
	0x99, 0x9a, 0xa2, 0xa3, 0xa4, 0xa5, 0xa6, 0xa7,
	0xa8, 0xa9, 0xaa, 0xb2, 0xb3, 0xb4, 0xb5, 0xb6,
	0xb7, 0xb8, 0xb9, 0xba, 0xc2, 0xc3, 0xc4, 0xc5,
	0xc6, 0xc7, 0xc8, 0xc9, 0xca, 0xd2, 0xd3, 0xd4,
	0xd5, 0xd6, 0xd7, 0xd8, 0xd9, 0xda, 0xe1, 0xe2,
	0xe3, 0xe4, 0xe5, 0xe6, 0xe7, 0xe8, 0xe9, 0xea,
	0xf1, 0xf2, 0xf3, 0xf4, 0xf5, 0xf6, 0xf7, 0xf8,
	0xf9, 0xfa,
}

var stdACChrominance = []uint8{
	0x00, 0x01, 0x02, 0x03, 0x11, 0x04, 0x05, 0x21,
	0x31, 0x06, 0x12, 0x41, 0x51, 0x07, 0x61, 0x71,
	0x13, 0x22, 0x32, 0x81, 0x08, 0x14, 0x42, 0x91,
	0xa1, 0xb1, 0xc1, 0x09, 0x23, 0x33, 0x52, 0xf0,
	0x15, 0x62, 0x72, 0xd1, 0x0a, 0x16, 0x24, 0x34,
	0xe1, 0x25, 0xf1, 0x17, 0x18, 0x19, 0x1a, 0x26,
	0x27, 0x28, 0x29, 0x2a, 0x35, 0x36, 0x37, 0x38,
	0x39, 0x3a, 0x43, 0x44, 0x45, 0x46, 0x47, 0x48,
	0x49, 0x4a, 0x53, 0x54, 0x55, 0x56, 0x57, 0x58,
	0x59, 0x5a, 0x63, 0x64, 0x65, 0x66, 0x67, 0x68,
	0x69, 0x6a, 0x73, 0x74, 0x75, 0x76, 0x77, 0x78,
	0x79, 0x7a, 0x82, 0x83, 0x84, 0x85, 0x86, 0x87,
	0x88, 0x89, 0x8a, 0x92, 0x93, 0x94, 0x95, 0x96,
	0x97, 0x98, 0x99, 0x9a, 0xa2, 0xa3, 0xa4, 0xa5,
	0xa6, 0xa7, 0xa8, 0xa9, 0xaa, 0xb2, 0xb3, 0xb4,
	0xb5, 0xb6, 0xb7, 0xb8, 0xb9, 0xba, 0xc2, 0xc3,
	0xc4, 0xc5, 0xc6, 0xc7, 0xc8, 0xc9, 0xca, 0xd2,
	0xd3, 0xd4, 0xd5, 0xd6, 0xd7, 0xd8, 0xd9, 0xda,
	0xe2, 0xe3, 0xe4, 0xe5, 0xe6, 0xe7, 0xe8, 0xe9,
	0xea, 0xf2, 0xf3, 0xf4, 0xf5, 0xf6, 0xf7, 0xf8,
	0xf9, 0xfa,
}

// bitReader reads the entropy-coded segment of a scan, MSB first, removing
// the stuffed zero after each 0xFF. It never reads past a marker: at a
// marker or at the end of the input it supplies zero bytes and counts them,
// and the caller checks after each MCU that none of those invented bits was
// used, which is how truncation and premature markers are detected.
type bitReader struct {
	data  []byte
	pos   int
	bits  uint64 // the next nbits bits, left-aligned
	nbits uint
	// fake counts the zero bytes appended after the data ran out.
	fake int
}

// fill tops the buffer up to at least 57 bits.
func (br *bitReader) fill() {
	// Fast path: when the next eight bytes hold no 0xFF, take as many
	// whole bytes as fit in one go.
	if br.fake == 0 && br.pos+8 <= len(br.data) {
		x := binary.BigEndian.Uint64(br.data[br.pos:])
		const ones, highs = 0x0101010101010101, 0x8080808080808080
		if (^x-ones)&x&highs == 0 { // no byte of x is 0xFF
			n := (64 - br.nbits) >> 3
			br.bits |= (x &^ (1<<(64-8*n) - 1)) >> br.nbits
			br.nbits += 8 * n
			br.pos += int(n)
			return
		}
	}
	for br.nbits <= 56 {
		var b byte
		if br.fake == 0 && br.pos < len(br.data) {
			b = br.data[br.pos]
			if b != 0xff {
				br.pos++
			} else {
				// 0xFF: a stuffed 0xFF00 (perhaps after fill bytes) is data;
				// anything else is a marker, which we leave in place.
				p := br.pos + 1
				for p < len(br.data) && br.data[p] == 0xff {
					p++
				}
				if p < len(br.data) && br.data[p] == 0 {
					br.pos = p + 1
				} else {
					br.fake++
					b = 0
				}
			}
		} else {
			br.fake++
		}
		br.bits |= uint64(b) << (56 - br.nbits)
		br.nbits += 8
	}
}

// overrun reports whether bits invented past the end of the data have been
// consumed.
func (br *bitReader) overrun() bool {
	return br.fake > 0 && int(br.nbits) < 8*br.fake
}

// reset drops the buffered bits, at a restart marker or the end of a scan.
// The buffer never holds bytes from beyond a marker, so the search for the
// next marker can start at pos.
func (br *bitReader) reset() {
	br.bits, br.nbits, br.fake = 0, 0, 0
}

func (br *bitReader) getBits(n uint) int32 {
	if br.nbits < n {
		br.fill()
	}
	v := int32(br.bits >> (64 - n))
	br.bits <<= n
	br.nbits -= n
	return v
}

func (br *bitReader) getBit() bool {
	if br.nbits == 0 {
		br.fill()
	}
	v := int64(br.bits) < 0
	br.bits <<= 1
	br.nbits--
	return v
}

// extend turns the n-bit magnitude v into a signed coefficient (T.81 F.2.2.1).
func extend(v int32, n uint) int32 {
	if v < 1<<(n-1) {
		v += -1<<n + 1
	}
	return v
}

// receiveExtend reads n bits and extends them; n is 0 to 15.
func (br *bitReader) receiveExtend(n uint8) int32 {
	if n == 0 {
		return 0
	}
	return extend(br.getBits(uint(n)), uint(n))
}

var errBadCode = fmt.Errorf("invalid Huffman code")

// decode reads one Huffman-coded symbol.
func (br *bitReader) decode(t *huffTable) (uint8, error) {
	if br.nbits < 16 {
		br.fill()
	}
	if e := t.lookup[br.bits>>(64-lookBits)]; e != 0 {
		n := uint(e >> 8)
		br.bits <<= n
		br.nbits -= n
		return uint8(e), nil
	}
	return br.decodeSlow(t)
}

// decodeSlow reads a symbol whose code is longer than lookBits.
func (br *bitReader) decodeSlow(t *huffTable) (uint8, error) {
	for l := uint(lookBits + 1); l <= 16; l++ {
		code := int32(br.bits >> (64 - l))
		if code <= t.maxCode[l] {
			br.bits <<= l
			br.nbits -= l
			return t.vals[t.valPtr[l]+code], nil
		}
	}
	return 0, errBadCode
}
