package jpeg

import (
	"errors"
	"fmt"
)

// Arithmetic decoding follows T.81 Annex D (the QM-coder decoder) and the
// coefficient models of Annex F.1.4.4 and G.1.3.3, with the statistics
// layout of libjpeg-turbo's jdarith.c so that conditioning tables (DAC)
// and bins behave as they do there.

// qeEntry is one row of T.81 Table D.2: the LPS probability estimate and
// the next states after an MPS or an LPS, and whether an LPS swaps the
// sense of MPS. Row 113 is the fixed 0.5 estimate that libjpeg-turbo uses
// for sign and refinement bits (T.851).
type qeEntry struct {
	qe         uint16
	nmps, nlps uint8
	swap       uint8
}

var qeTable = [114]qeEntry{
	{0x5a1d, 1, 1, 1},     // 0
	{0x2586, 2, 14, 0},    // 1
	{0x1114, 3, 16, 0},    // 2
	{0x080b, 4, 18, 0},    // 3
	{0x03d8, 5, 20, 0},    // 4
	{0x01da, 6, 23, 0},    // 5
	{0x00e5, 7, 25, 0},    // 6
	{0x006f, 8, 28, 0},    // 7
	{0x0036, 9, 30, 0},    // 8
	{0x001a, 10, 33, 0},   // 9
	{0x000d, 11, 35, 0},   // 10
	{0x0006, 12, 9, 0},    // 11
	{0x0003, 13, 10, 0},   // 12
	{0x0001, 13, 12, 0},   // 13
	{0x5a7f, 15, 15, 1},   // 14
	{0x3f25, 16, 36, 0},   // 15
	{0x2cf2, 17, 38, 0},   // 16
	{0x207c, 18, 39, 0},   // 17
	{0x17b9, 19, 40, 0},   // 18
	{0x1182, 20, 42, 0},   // 19
	{0x0cef, 21, 43, 0},   // 20
	{0x09a1, 22, 45, 0},   // 21
	{0x072f, 23, 46, 0},   // 22
	{0x055c, 24, 48, 0},   // 23
	{0x0406, 25, 49, 0},   // 24
	{0x0303, 26, 51, 0},   // 25
	{0x0240, 27, 52, 0},   // 26
	{0x01b1, 28, 54, 0},   // 27
	{0x0144, 29, 56, 0},   // 28
	{0x00f5, 30, 57, 0},   // 29
	{0x00b7, 31, 59, 0},   // 30
	{0x008a, 32, 60, 0},   // 31
	{0x0068, 33, 62, 0},   // 32
	{0x004e, 34, 63, 0},   // 33
	{0x003b, 35, 32, 0},   // 34
	{0x002c, 9, 33, 0},    // 35
	{0x5ae1, 37, 37, 1},   // 36
	{0x484c, 38, 64, 0},   // 37
	{0x3a0d, 39, 65, 0},   // 38
	{0x2ef1, 40, 67, 0},   // 39
	{0x261f, 41, 68, 0},   // 40
	{0x1f33, 42, 69, 0},   // 41
	{0x19a8, 43, 70, 0},   // 42
	{0x1518, 44, 72, 0},   // 43
	{0x1177, 45, 73, 0},   // 44
	{0x0e74, 46, 74, 0},   // 45
	{0x0bfb, 47, 75, 0},   // 46
	{0x09f8, 48, 77, 0},   // 47
	{0x0861, 49, 78, 0},   // 48
	{0x0706, 50, 79, 0},   // 49
	{0x05cd, 51, 48, 0},   // 50
	{0x04de, 52, 50, 0},   // 51
	{0x040f, 53, 50, 0},   // 52
	{0x0363, 54, 51, 0},   // 53
	{0x02d4, 55, 52, 0},   // 54
	{0x025c, 56, 53, 0},   // 55
	{0x01f8, 57, 54, 0},   // 56
	{0x01a4, 58, 55, 0},   // 57
	{0x0160, 59, 56, 0},   // 58
	{0x0125, 60, 57, 0},   // 59
	{0x00f6, 61, 58, 0},   // 60
	{0x00cb, 62, 59, 0},   // 61
	{0x00ab, 63, 61, 0},   // 62
	{0x008f, 32, 61, 0},   // 63
	{0x5b12, 65, 65, 1},   // 64
	{0x4d04, 66, 80, 0},   // 65
	{0x412c, 67, 81, 0},   // 66
	{0x37d8, 68, 82, 0},   // 67
	{0x2fe8, 69, 83, 0},   // 68
	{0x293c, 70, 84, 0},   // 69
	{0x2379, 71, 86, 0},   // 70
	{0x1edf, 72, 87, 0},   // 71
	{0x1aa9, 73, 87, 0},   // 72
	{0x174e, 74, 72, 0},   // 73
	{0x1424, 75, 72, 0},   // 74
	{0x119c, 76, 74, 0},   // 75
	{0x0f6b, 77, 74, 0},   // 76
	{0x0d51, 78, 75, 0},   // 77
	{0x0bb6, 79, 77, 0},   // 78
	{0x0a40, 48, 77, 0},   // 79
	{0x5832, 81, 80, 1},   // 80
	{0x4d1c, 82, 88, 0},   // 81
	{0x438e, 83, 89, 0},   // 82
	{0x3bdd, 84, 90, 0},   // 83
	{0x34ee, 85, 91, 0},   // 84
	{0x2eae, 86, 92, 0},   // 85
	{0x299a, 87, 93, 0},   // 86
	{0x2516, 71, 86, 0},   // 87
	{0x5570, 89, 88, 1},   // 88
	{0x4ca9, 90, 95, 0},   // 89
	{0x44d9, 91, 96, 0},   // 90
	{0x3e22, 92, 97, 0},   // 91
	{0x3824, 93, 99, 0},   // 92
	{0x32b4, 94, 99, 0},   // 93
	{0x2e17, 86, 93, 0},   // 94
	{0x56a8, 96, 95, 1},   // 95
	{0x4f46, 97, 101, 0},  // 96
	{0x47e5, 98, 102, 0},  // 97
	{0x41cf, 99, 103, 0},  // 98
	{0x3c3d, 100, 104, 0}, // 99
	{0x375e, 93, 99, 0},   // 100
	{0x5231, 102, 105, 0}, // 101
	{0x4c0f, 103, 106, 0}, // 102
	{0x4639, 104, 107, 0}, // 103
	{0x415e, 99, 103, 0},  // 104
	{0x5627, 106, 105, 1}, // 105
	{0x50e7, 107, 108, 0}, // 106
	{0x4b85, 103, 109, 0}, // 107
	{0x5597, 109, 110, 0}, // 108
	{0x504f, 107, 111, 0}, // 109
	{0x5a10, 111, 110, 1}, // 110
	{0x5522, 109, 112, 0}, // 111
	{0x59eb, 111, 112, 1}, // 112
	{0x5a1d, 113, 113, 0}, // 113
}

// arithDecoder is the QM-coder state: a is the interval, c the code
// register whose top 16 bits are compared with a, ct the bits left before
// the next byte is needed.
type arithDecoder struct {
	data []byte
	pos  int
	a, c uint32
	ct   int
	eof  bool // ran off the end of the input (not into a marker)
}

// byteIn adds the next data byte below the 16 bits being decoded. At a
// marker, zeros are supplied, which T.81 makes legal: an encoder drops the
// zero bytes at the end of a segment.
func (ad *arithDecoder) byteIn() {
	if ad.pos >= len(ad.data) {
		ad.eof = true
		return
	}
	b := ad.data[ad.pos]
	if b == 0xff {
		p := ad.pos + 1
		for p < len(ad.data) && ad.data[p] == 0xff {
			p++
		}
		if p >= len(ad.data) {
			ad.eof = true
			return
		}
		if ad.data[p] != 0 {
			return // a marker: leave it, feed zeros
		}
		ad.pos = p + 1
	} else {
		ad.pos++
	}
	ad.c |= uint32(b) << 8
}

func (ad *arithDecoder) init() {
	ad.c = 0
	ad.byteIn()
	ad.c <<= 8
	ad.byteIn()
	ad.c <<= 8
	ad.ct = 0
	ad.a = 0x10000
}

// decode decodes one binary decision with the adaptive state *st, which
// holds the MPS sense in bit 7 and a Table D.2 index below it.
func (ad *arithDecoder) decode(st *uint8) int {
	sv := *st
	e := &qeTable[sv&0x7f]
	qe := uint32(e.qe)
	mps := int(sv >> 7)
	ad.a -= qe
	var d int
	if ad.c>>16 < ad.a {
		if ad.a >= 0x8000 {
			return mps
		}
		// Conditional MPS exchange (Figure D.18).
		if ad.a < qe {
			d = 1 - mps
			*st = (sv & 0x80) ^ (e.swap << 7) | e.nlps
		} else {
			d = mps
			*st = sv&0x80 | e.nmps
		}
	} else {
		// Conditional LPS exchange (Figure D.19).
		ad.c -= ad.a << 16
		if ad.a < qe {
			d = mps
			*st = sv&0x80 | e.nmps
		} else {
			d = 1 - mps
			*st = (sv & 0x80) ^ (e.swap << 7) | e.nlps
		}
		ad.a = qe
	}
	// Renormalisation (Figure D.20).
	for {
		if ad.ct == 0 {
			ad.byteIn()
			ad.ct = 8
		}
		ad.a <<= 1
		ad.c <<= 1
		ad.ct--
		if ad.a >= 0x8000 {
			break
		}
	}
	return d
}

var (
	errArithMagnitude = errors.New("arithmetic-coded magnitude overflows")
	errArithSpectral  = errors.New("arithmetic-coded coefficient index past the end of the band")
)

// arithStats are the adaptive statistics of one scan.
type arithStats struct {
	dc    [16][64]uint8
	ac    [16][256]uint8
	fixed uint8
	ctx   [4]int // DC conditioning category of each scan component
}

// decodeMagnitude decodes the magnitude category and bits of a nonzero AC
// value (Figures F.23 and F.24, with the bins jdarith.c uses) and applies
// the sign. first is the bin of the first category decisions; more is
// where the further ones start.
func (ad *arithDecoder) decodeMagnitude(stats []uint8, first, more, sign int) (int32, error) {
	st := first
	m := ad.decode(&stats[st])
	if m != 0 {
		if ad.decode(&stats[st]) != 0 {
			m <<= 1
			st = more
			for ad.decode(&stats[st]) != 0 {
				m <<= 1
				if m == 0x8000 {
					return 0, errArithMagnitude
				}
				st++
			}
		}
	}
	v := int32(m)
	st += 14
	for m >>= 1; m != 0; m >>= 1 {
		if ad.decode(&stats[st]) != 0 {
			v |= int32(m)
		}
	}
	v++
	if sign != 0 {
		v = -v
	}
	return v, nil
}

// arithDCDiff decodes a DC difference and updates the conditioning
// category (F.1.4.4.1).
func (d *decoder) arithDCDiff(ad *arithDecoder, s *arithStats, tbl uint8, i int) (int32, error) {
	stats := s.dc[tbl][:]
	ctx := s.ctx[i]
	if ad.decode(&stats[ctx]) == 0 {
		s.ctx[i] = 0
		return 0, nil
	}
	sign := ad.decode(&stats[ctx+1])
	first := ctx + 2 + sign
	// The category decides the next context, so find it first.
	st := first
	m := ad.decode(&stats[st])
	if m != 0 {
		st = 20
		for ad.decode(&stats[st]) != 0 {
			m <<= 1
			if m == 0x8000 {
				return 0, errArithMagnitude
			}
			st++
		}
	}
	l, u := int(d.arithDC[tbl]&15), int(d.arithDC[tbl]>>4)
	switch {
	case m < (1<<l)>>1:
		s.ctx[i] = 0
	case m > (1<<u)>>1:
		s.ctx[i] = 12 + sign*4
	default:
		s.ctx[i] = 4 + sign*4
	}
	v := int32(m)
	st += 14
	for m >>= 1; m != 0; m >>= 1 {
		if ad.decode(&stats[st]) != 0 {
			v |= int32(m)
		}
	}
	v++
	if sign != 0 {
		v = -v
	}
	return v, nil
}

// decodeArithAC decodes the AC coefficients ss..se of a first (or sequential)
// scan into blk, shifted left by al.
func (d *decoder) decodeArithAC(ad *arithDecoder, s *arithStats, tbl uint8, blk *[64]int16, ss, se, al int) error {
	stats := s.ac[tbl][:]
	kx := int(d.arithAC[tbl])
	for k := ss; k <= se; k++ {
		st := 3 * (k - 1)
		if ad.decode(&stats[st]) != 0 {
			break // end of block
		}
		for ad.decode(&stats[st+1]) == 0 {
			st += 3
			k++
			if k > se {
				return errArithSpectral
			}
		}
		sign := ad.decode(&s.fixed)
		more := 217
		if k <= kx {
			more = 189
		}
		v, err := ad.decodeMagnitude(stats, st+2, more, sign)
		if err != nil {
			return err
		}
		blk[zigzag[k]] = int16(v << al)
	}
	return nil
}

// decodeArithACRefine decodes a successive-approximation refinement of the AC
// coefficients ss..se (G.1.3.3).
func (d *decoder) decodeArithACRefine(ad *arithDecoder, s *arithStats, tbl uint8, blk *[64]int16, ss, se, al int) error {
	stats := s.ac[tbl][:]
	p1 := int16(1) << al
	m1 := int16(-1) << al
	// The end of block of the previous stage.
	kex := se
	for ; kex > 0; kex-- {
		if blk[zigzag[kex]] != 0 {
			break
		}
	}
	for k := ss; k <= se; k++ {
		st := 3 * (k - 1)
		if k > kex && ad.decode(&stats[st]) != 0 {
			break
		}
		for {
			z := &blk[zigzag[k]]
			if *z != 0 {
				if ad.decode(&stats[st+2]) != 0 {
					if *z < 0 {
						*z += m1
					} else {
						*z += p1
					}
				}
				break
			}
			if ad.decode(&stats[st+1]) != 0 {
				if ad.decode(&s.fixed) != 0 {
					*z = m1
				} else {
					*z = p1
				}
				break
			}
			st += 3
			k++
			if k > se {
				return errArithSpectral
			}
		}
	}
	return nil
}

// resetStats clears the statistics a scan uses, at its start and at each
// restart, with the DC predictions and contexts.
func (d *decoder) resetStats(s *scan, st *arithStats) {
	for i := 0; i < s.n; i++ {
		c := s.comps[i]
		if !d.progressive || (s.ss == 0 && s.ah == 0) {
			st.dc[c.td] = [64]uint8{}
			c.pred = 0
			st.ctx[i] = 0
		}
		if !d.progressive || s.ss > 0 {
			st.ac[c.ta] = [256]uint8{}
		}
	}
}

func (d *decoder) decodeArithScan(s *scan) error {
	st := &arithStats{fixed: 113}
	d.resetStats(s, st)
	ad := arithDecoder{data: d.data, pos: d.pos}
	ad.init()
	perRow, rows := d.geometry(s)
	var scratch [64]int16
	togo := d.dri
	nextRST := 0
	for my := 0; my < rows; my++ {
		for mx := 0; mx < perRow; mx++ {
			if d.dri > 0 {
				if togo == 0 {
					br := bitReader{data: d.data, pos: ad.pos}
					if err := d.restart(&br, &nextRST, s, my); err != nil {
						return err
					}
					d.resetStats(s, st)
					ad = arithDecoder{data: d.data, pos: br.pos}
					ad.init()
					togo = d.dri
				}
				togo--
			}
			for i := 0; i < s.n; i++ {
				c := s.comps[i]
				bh, bv := 1, 1
				if s.n > 1 {
					bh, bv = c.h, c.v
				}
				for y := 0; y < bv; y++ {
					by := my*bv + y
					for x := 0; x < bh; x++ {
						bx := mx*bh + x
						inside := bx < c.bw && by < c.bh
						blk := &scratch
						if d.buffered && inside {
							blk = (*[64]int16)(c.coef[(by*c.bw+bx)*64:])
						}
						var err error
						switch {
						case !d.progressive:
							var v int32
							if v, err = d.arithDCDiff(&ad, st, c.td, i); err == nil {
								c.pred = (c.pred + v) & 0xffff
								blk[0] = int16(c.pred)
								err = d.decodeArithAC(&ad, st, c.ta, blk, 1, 63, 0)
							}
						case s.ss == 0 && s.ah == 0:
							var v int32
							if v, err = d.arithDCDiff(&ad, st, c.td, i); err == nil {
								c.pred = (c.pred + v) & 0xffff
								blk[0] = int16(c.pred << s.al)
							}
						case s.ss == 0:
							if ad.decode(&st.fixed) != 0 {
								blk[0] |= 1 << s.al
							}
						case s.ah == 0:
							err = d.decodeArithAC(&ad, st, c.ta, blk, s.ss, s.se, s.al)
						default:
							err = d.decodeArithACRefine(&ad, st, c.ta, blk, s.ss, s.se, s.al)
						}
						if err != nil {
							return fmt.Errorf("jpeg: corrupt data in scan %d (MCU row %d): %v", s.num, my, err)
						}
						if !d.buffered {
							if inside {
								idct(c.plane[by*8*c.stride+bx*8:], c.stride, blk, &c.qt)
							}
							*blk = [64]int16{}
						} else if blk == &scratch {
							scratch = [64]int16{}
						}
					}
				}
			}
			if ad.eof {
				return fmt.Errorf("jpeg: truncated in scan %d (MCU row %d)", s.num, my)
			}
		}
	}
	d.pos = ad.pos
	return nil
}
