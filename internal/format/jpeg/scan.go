package jpeg

import (
	"errors"
	"fmt"
)

// scan holds the parameters of one SOS segment.
type scan struct {
	num    int // 1-based scan number, for messages
	n      int
	comps  [4]*component
	ss, se int
	ah, al int
	dc, ac [4]*huffTable
}

var errBadRun = errors.New("AC run past the end of the block")

func decodeBytes(data []byte, o Options) (*RGBImage, error) {
	d := newDecoder(o)
	d.data = data
	if len(data) < 2 || data[0] != 0xff || data[1] != mSOI {
		return nil, fmt.Errorf("jpeg: not a JPEG file (no SOI marker)")
	}
	d.pos = 2
	for !d.eoi {
		m, err := d.nextMarker()
		if err != nil {
			return nil, err
		}
		switch {
		case m == mEOI:
			if !d.started {
				return nil, fmt.Errorf("jpeg: EOI before the first scan")
			}
			d.eoi = true
		case m == mTEM || (m >= mRST0 && m <= mRST7):
			// Parameterless; libjpeg-turbo ignores them between segments.
		case m == mSOI:
			return nil, fmt.Errorf("jpeg: SOI marker inside the image")
		default:
			p, err := d.readSegment(m)
			if err != nil {
				return nil, err
			}
			if m == mSOS {
				if err := d.sos(p); err != nil {
					return nil, err
				}
			} else if err := d.segment(m, p); err != nil {
				return nil, err
			}
		}
	}
	return d.finish()
}

// nextMarker finds the next marker at or after d.pos and returns its code,
// leaving d.pos after it. Before the first scan it insists that a marker
// start right there, as Pillow's header parser does; after it, it skips
// stray bytes as libjpeg-turbo does (with a warning) after a scan.
func (d *decoder) nextMarker() (byte, error) {
	for {
		if d.pos >= len(d.data) {
			if !d.started {
				return 0, errTruncatedHeader
			}
			return 0, fmt.Errorf("jpeg: truncated after scan %d (no EOI marker)", d.scans)
		}
		if d.data[d.pos] != 0xff {
			if !d.started {
				return 0, fmt.Errorf("jpeg: no marker found where one was expected (offset %d)", d.pos)
			}
			d.pos++
			continue
		}
		p := d.pos + 1
		for p < len(d.data) && d.data[p] == 0xff {
			p++
		}
		if p >= len(d.data) {
			d.pos = p
			continue
		}
		m := d.data[p]
		d.pos = p + 1
		if m == 0 {
			if !d.started {
				return 0, fmt.Errorf("jpeg: no marker found where one was expected (offset %d)", p-1)
			}
			continue
		}
		return m, nil
	}
}

func (d *decoder) readSegment(m byte) ([]byte, error) {
	if d.pos+2 > len(d.data) {
		return nil, fmt.Errorf("jpeg: truncated in %s segment", markerName(m))
	}
	n := int(d.data[d.pos])<<8 | int(d.data[d.pos+1])
	if n < 2 {
		return nil, fmt.Errorf("jpeg: bad length %d in %s segment", n, markerName(m))
	}
	if d.pos+n > len(d.data) {
		return nil, fmt.Errorf("jpeg: truncated in %s segment", markerName(m))
	}
	p := d.data[d.pos+2 : d.pos+n]
	d.pos += n
	return p, nil
}

// sos parses a scan header and decodes the scan that follows it.
func (d *decoder) sos(p []byte) error {
	first := !d.started
	if first {
		if err := d.startFrame(); err != nil {
			return err
		}
	}
	d.scans++
	if d.scans > d.opt.MaxScans {
		return fmt.Errorf("jpeg: more than %d scans", d.opt.MaxScans)
	}
	s := scan{num: d.scans}
	if len(p) < 1 {
		return fmt.Errorf("jpeg: bad SOS length")
	}
	s.n = int(p[0])
	if s.n < 1 || s.n > 4 || len(p) != 4+2*s.n {
		return fmt.Errorf("jpeg: bad SOS length")
	}
	for i := 0; i < s.n; i++ {
		id, sel := p[1+2*i], p[2+2*i]
		var c *component
		for j := 0; j < d.ncomp; j++ {
			if d.comps[j].id == id {
				c = &d.comps[j]
				break
			}
		}
		if c == nil {
			return fmt.Errorf("jpeg: scan %d names unknown component %d", s.num, id)
		}
		for j := 0; j < i; j++ {
			if s.comps[j] == c {
				return fmt.Errorf("jpeg: scan %d names component %d twice", s.num, id)
			}
		}
		c.td, c.ta = sel>>4, sel&15
		s.comps[i] = c
	}
	q := 1 + 2*s.n
	s.ss, s.se = int(p[q]), int(p[q+1])
	s.ah, s.al = int(p[q+2]>>4), int(p[q+2]&15)

	if first {
		// A single scan holding every component is decoded straight to
		// samples; anything else keeps coefficients until EOI.
		d.buffered = d.progressive || s.n < d.ncomp
		if err := d.allocate(); err != nil {
			return err
		}
	} else if !d.buffered {
		return fmt.Errorf("jpeg: second scan in a single-scan image (EOI expected)")
	}

	blocks := 0
	for i := 0; i < s.n; i++ {
		c := s.comps[i]
		blocks += c.h * c.v
		// Quantization tables are fixed when a component is first scanned.
		if !c.latched {
			if c.tq > 3 || d.qt[c.tq] == nil {
				return fmt.Errorf("jpeg: component %d uses undefined quantization table %d", c.id, c.tq)
			}
			for k, v := range d.qt[c.tq] {
				c.qt[k] = int32(v)
			}
			c.latched = true
		}
		c.seen = true
	}
	if s.n > 1 && blocks > 10 {
		return fmt.Errorf("jpeg: scan %d has %d blocks per MCU (at most 10)", s.num, blocks)
	}
	if d.progressive {
		if err := d.checkProgression(&s); err != nil {
			return err
		}
	}
	var err error
	if d.arithmetic {
		err = d.decodeArithScan(&s)
	} else {
		err = d.decodeHuffScan(&s)
	}
	return err
}

// checkProgression applies the checks of libjpeg-turbo's progressive
// decoder. It errors where libjpeg-turbo does, and also where it only warns
// (an impossible sequence of refinements), since the pixels it then
// produces are not those of the file.
func (d *decoder) checkProgression(s *scan) error {
	bad := false
	if s.ss == 0 {
		bad = s.se != 0
	} else {
		bad = s.se < s.ss || s.se > 63 || s.n != 1
	}
	if s.ah != 0 && s.al != s.ah-1 {
		bad = true
	}
	if s.al > 13 {
		bad = true
	}
	if bad {
		return fmt.Errorf("jpeg: scan %d has invalid progressive parameters Ss=%d Se=%d Ah=%d Al=%d", s.num, s.ss, s.se, s.ah, s.al)
	}
	for i := 0; i < s.n; i++ {
		c := s.comps[i]
		if s.ss > 0 && c.coefBits[0] < 0 {
			return fmt.Errorf("jpeg: scan %d refines AC coefficients of component %d before its DC scan", s.num, c.id)
		}
		for k := s.ss; k <= s.se; k++ {
			want := max(int(c.coefBits[k]), 0)
			if s.ah != want {
				return fmt.Errorf("jpeg: scan %d: bogus progression for coefficient %d of component %d", s.num, k, c.id)
			}
			c.coefBits[k] = int8(s.al)
		}
	}
	return nil
}

// allocate makes the sample planes and, for multi-scan files, the
// coefficient buffers, once the first scan has shown which are needed.
func (d *decoder) allocate() error {
	var blocks int64
	for i := 0; i < d.ncomp; i++ {
		c := &d.comps[i]
		blocks += int64(c.bw) * int64(c.bh)
	}
	// Every block costs at least one bit of Huffman-coded data (its DC
	// code), so a short file cannot describe a large image; refusing here
	// keeps a few hostile bytes from making us allocate gigabytes.
	// Arithmetic coding can code a block in less than a bit, so it is held
	// only to the pixel limit.
	if !d.arithmetic && blocks > 8*int64(len(d.data)) {
		return fmt.Errorf("jpeg: truncated: %d bytes cannot hold the %d blocks of a %dx%d image",
			len(d.data), blocks, d.width, d.height)
	}
	for i := 0; i < d.ncomp; i++ {
		c := &d.comps[i]
		c.stride = c.bw * 8
		c.plane = make([]byte, c.stride*c.bh*8)
		if d.buffered {
			c.coef = make([]int16, c.bw*c.bh*64)
		}
	}
	return nil
}

func (d *decoder) tables(s *scan) error {
	for i := 0; i < s.n; i++ {
		c := s.comps[i]
		needDC := !d.progressive || (s.ss == 0 && s.ah == 0)
		needAC := !d.progressive || s.ss > 0
		if needDC {
			if s.dc[i] = d.huffTable(true, c.td); s.dc[i] == nil {
				return fmt.Errorf("jpeg: scan %d uses undefined DC Huffman table %d", s.num, c.td)
			}
		}
		if needAC {
			if s.ac[i] = d.huffTable(false, c.ta); s.ac[i] == nil {
				return fmt.Errorf("jpeg: scan %d uses undefined AC Huffman table %d", s.num, c.ta)
			}
		}
	}
	return nil
}

func (d *decoder) huffTable(isDC bool, id uint8) *huffTable {
	if id > 3 {
		return nil
	}
	t := d.ac[id]
	if isDC {
		t = d.dc[id]
	}
	if t == nil && id < 2 {
		t = stdHuff(isDC, int(id))
		if isDC {
			d.dc[id] = t
		} else {
			d.ac[id] = t
		}
	}
	return t
}

// geometry returns the MCU grid of a scan: one block per MCU in a
// single-component scan, the frame's MCU otherwise.
func (d *decoder) geometry(s *scan) (perRow, rows int) {
	if s.n == 1 {
		return s.comps[0].bw, s.comps[0].bh
	}
	return d.mcusX, d.mcusY
}

// restart consumes the restart marker expected after an interval.
func (d *decoder) restart(br *bitReader, want *int, s *scan, row int) error {
	br.reset()
	p := br.pos
	// Skip stray bytes, as libjpeg-turbo does with a warning.
	for p < len(d.data) {
		if d.data[p] == 0xff {
			q := p + 1
			for q < len(d.data) && d.data[q] == 0xff {
				q++
			}
			if q < len(d.data) && d.data[q] != 0 {
				m := d.data[q]
				if m != mRST0+byte(*want) {
					return fmt.Errorf("jpeg: corrupt data in scan %d (MCU row %d): expected RST%d, found %s",
						s.num, row, *want, markerName(m))
				}
				br.pos = q + 1
				*want = (*want + 1) & 7
				return nil
			}
			p = q + 1
			continue
		}
		p++
	}
	return fmt.Errorf("jpeg: truncated in scan %d (MCU row %d)", s.num, row)
}

func (d *decoder) overrunError(br *bitReader, s *scan, row int) error {
	if br.pos >= len(d.data) {
		return fmt.Errorf("jpeg: truncated in scan %d (MCU row %d)", s.num, row)
	}
	m := byte(0)
	if br.pos+1 < len(d.data) {
		m = d.data[br.pos+1]
	}
	return fmt.Errorf("jpeg: corrupt data in scan %d (MCU row %d): entropy-coded data ends early at marker %s",
		s.num, row, markerName(m))
}

// decodeHuffScan decodes one Huffman-coded scan.
func (d *decoder) decodeHuffScan(s *scan) error {
	if err := d.tables(s); err != nil {
		return err
	}
	br := bitReader{data: d.data, pos: d.pos}
	perRow, rows := d.geometry(s)
	for i := 0; i < s.n; i++ {
		s.comps[i].pred = 0
	}
	var scratch [64]int16
	eobrun := int32(0)
	togo := d.dri
	nextRST := 0
	prog := d.progressive
	for my := 0; my < rows; my++ {
		for mx := 0; mx < perRow; mx++ {
			if d.dri > 0 {
				if togo == 0 {
					if br.overrun() {
						return d.overrunError(&br, s, my)
					}
					if err := d.restart(&br, &nextRST, s, my); err != nil {
						return err
					}
					for i := 0; i < s.n; i++ {
						s.comps[i].pred = 0
					}
					eobrun = 0
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
						ac := true
						switch {
						case !prog:
							ac, err = decodeSeq(&br, s.dc[i], s.ac[i], blk, &c.pred)
						case s.ss == 0 && s.ah == 0:
							err = decodeDCFirst(&br, s.dc[i], blk, &c.pred, s.al)
						case s.ss == 0:
							if br.getBit() {
								blk[0] |= 1 << s.al
							}
						case s.ah == 0:
							err = decodeACFirst(&br, s.ac[i], blk, &eobrun, s)
						default:
							err = decodeACRefine(&br, s.ac[i], blk, &eobrun, s)
						}
						if err != nil {
							if br.overrun() {
								return d.overrunError(&br, s, my)
							}
							return fmt.Errorf("jpeg: corrupt data in scan %d (MCU row %d): %v", s.num, my, err)
						}
						if !d.buffered {
							if inside {
								dst := c.plane[by*8*c.stride+bx*8:]
								if ac {
									idct(dst, c.stride, blk, &c.qt)
								} else {
									idctDC(dst, c.stride, blk[0], c.qt[0])
								}
							}
							if ac {
								*blk = [64]int16{}
							}
							blk[0] = 0
						} else if blk == &scratch {
							scratch = [64]int16{}
						}
					}
				}
			}
			if br.overrun() {
				return d.overrunError(&br, s, my)
			}
		}
	}
	br.reset()
	d.pos = br.pos
	return nil
}

// decodeSeq decodes a block of a sequential scan. It reports whether any
// AC coefficient is nonzero, so that flat blocks can skip the IDCT.
func decodeSeq(br *bitReader, dc, ac *huffTable, blk *[64]int16, pred *int32) (bool, error) {
	t, err := br.decode(dc)
	if err != nil {
		return false, err
	}
	*pred += br.receiveExtend(t)
	blk[0] = int16(*pred)
	nz := false
	for k := 1; k < 64; k++ {
		if br.nbits < 16 {
			br.fill()
		}
		if f := ac.fastAC[br.bits>>(64-lookBits)]; f != 0 {
			n := uint(f & 0xff)
			br.bits <<= n
			br.nbits -= n
			k += int(f>>8) & 15
			if k > 63 {
				return false, errBadRun
			}
			blk[zigzag[k]] = int16(f >> 16)
			nz = true
			continue
		}
		rs, err := br.decode(ac)
		if err != nil {
			return false, err
		}
		r, sz := int(rs>>4), rs&15
		if sz == 0 {
			if r != 15 {
				break
			}
			k += 15
			continue
		}
		k += r
		if k > 63 {
			return false, errBadRun
		}
		blk[zigzag[k]] = int16(br.receiveExtend(sz))
		nz = true
	}
	return nz, nil
}

func decodeDCFirst(br *bitReader, dc *huffTable, blk *[64]int16, pred *int32, al int) error {
	t, err := br.decode(dc)
	if err != nil {
		return err
	}
	*pred += br.receiveExtend(t)
	blk[0] = int16(*pred << al)
	return nil
}

func decodeACFirst(br *bitReader, ac *huffTable, blk *[64]int16, eobrun *int32, s *scan) error {
	if *eobrun > 0 {
		*eobrun--
		return nil
	}
	for k := s.ss; k <= s.se; k++ {
		rs, err := br.decode(ac)
		if err != nil {
			return err
		}
		r, sz := int(rs>>4), rs&15
		if sz == 0 {
			if r == 15 {
				k += 15
				continue
			}
			run := int32(1) << r
			if r > 0 {
				run += br.getBits(uint(r))
			}
			*eobrun = run - 1
			break
		}
		k += r
		if k > s.se {
			return errBadRun
		}
		blk[zigzag[k]] = int16(br.receiveExtend(sz) << s.al)
	}
	return nil
}

func decodeACRefine(br *bitReader, ac *huffTable, blk *[64]int16, eobrun *int32, s *scan) error {
	p1 := int16(1) << s.al
	m1 := int16(-1) << s.al
	k := s.ss
	if *eobrun == 0 {
		for ; k <= s.se; k++ {
			rs, err := br.decode(ac)
			if err != nil {
				return err
			}
			r, sz := int(rs>>4), rs&15
			var val int16
			if sz != 0 {
				if sz != 1 {
					return fmt.Errorf("refinement coefficient of size %d", sz)
				}
				if br.getBit() {
					val = p1
				} else {
					val = m1
				}
			} else if r != 15 {
				*eobrun = int32(1) << r
				if r > 0 {
					*eobrun += br.getBits(uint(r))
				}
				break
			}
			// Step over r zero-history coefficients, refining the nonzero
			// ones on the way, and stop at the next zero one.
			for ; k <= s.se; k++ {
				z := &blk[zigzag[k]]
				if *z != 0 {
					if br.getBit() && *z&p1 == 0 {
						if *z >= 0 {
							*z += p1
						} else {
							*z += m1
						}
					}
				} else {
					if r == 0 {
						break
					}
					r--
				}
			}
			if val != 0 {
				if k > s.se {
					return errBadRun
				}
				blk[zigzag[k]] = val
			}
		}
	}
	if *eobrun > 0 {
		// Inside an end-of-band run: only refine what is already nonzero.
		for ; k <= s.se; k++ {
			z := &blk[zigzag[k]]
			if *z != 0 {
				if br.getBit() && *z&p1 == 0 {
					if *z >= 0 {
						*z += p1
					} else {
						*z += m1
					}
				}
			}
		}
		*eobrun--
	}
	return nil
}
