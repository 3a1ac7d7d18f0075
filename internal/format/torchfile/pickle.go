package torchfile

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// maxPickle bounds a pickle genlens unpickles: a state dict's data.pkl is
// kilobytes (the FID network's is 30 KB, a ViT-L's 100 KB); the tensors
// themselves are not in it.
const maxPickle = 64 << 20

// scanPickle walks one pickle from r, opcode by opcode up to its STOP,
// without building anything, and returns its length in bytes. The
// unpickler (gopickle) allocates the length an opcode declares (a string,
// a bytes object, a frame) before it reads the bytes, so 15 bytes can ask
// it for a terabyte; here every declared length must fit in the bytes
// that remain of the pickle, at most remain, before the unpickler sees
// it. An opcode that no pickle protocol defines is an error too.
func scanPickle(r io.Reader, remain int64) (int64, error) {
	remain = min(remain, maxPickle)
	br := bufio.NewReader(io.LimitReader(r, remain))
	var pos int64
	var buf [8]byte
	fixed := func(n int) ([]byte, error) {
		if _, err := io.ReadFull(br, buf[:n]); err != nil {
			return nil, truncated(err)
		}
		pos += int64(n)
		return buf[:n], nil
	}
	skip := func(n uint64) error {
		if n > uint64(remain-pos) {
			return fmt.Errorf("pickle opcode at byte %d declares %d bytes, more than the %d left", pos, n, remain-pos)
		}
		if _, err := br.Discard(int(n)); err != nil {
			return truncated(err)
		}
		pos += int64(n)
		return nil
	}
	line := func() error {
		for {
			b, err := br.ReadByte()
			if err != nil {
				return truncated(err)
			}
			pos++
			if b == '\n' {
				return nil
			}
		}
	}
	for {
		op, err := br.ReadByte()
		if err != nil {
			return pos, truncated(err)
		}
		pos++
		var n uint64 // a length to skip
		switch op {
		case '.': // STOP
			return pos, nil
		case '(', '0', '1', '2', 'N', 'R', 'b', 'a', 'e', 'd', '}', 'l', ']', 'o', 's', 'u', 't', ')', 'Q',
			0x81, 0x85, 0x86, 0x87, 0x88, 0x89, 0x8f, 0x90, 0x91, 0x92, 0x93, 0x94, 0x97, 0x98:
			continue // no argument
		case 'K', 'h', 'q', 0x80, 0x82: // 1-byte argument
			_, err = fixed(1)
		case 'M', 0x83: // 2 bytes
			_, err = fixed(2)
		case 'J', 'j', 'r', 0x84: // 4 bytes
			_, err = fixed(4)
		case 'G': // an 8-byte float
			_, err = fixed(8)
		case 'I', 'L', 'F', 'S', 'V', 'P', 'g', 'p': // one line
			err = line()
		case 'c', 'i': // two lines
			if err = line(); err == nil {
				err = line()
			}
		case 'U', 'C', 0x8c, 0x8a: // a 1-byte length, then the bytes
			var b []byte
			if b, err = fixed(1); err == nil {
				n = uint64(b[0])
				err = skip(n)
			}
		case 'T', 'X', 'B', 0x8b: // a 4-byte length
			var b []byte
			if b, err = fixed(4); err == nil {
				n = uint64(binary.LittleEndian.Uint32(b))
				if op == 'T' || op == 0x8b { // signed in the format
					n = uint64(int64(int32(uint32(n))))
				}
				err = skip(n)
			}
		case 0x8d, 0x8e, 0x96: // an 8-byte length
			var b []byte
			if b, err = fixed(8); err == nil {
				err = skip(binary.LittleEndian.Uint64(b))
			}
		case 0x95: // FRAME: an 8-byte length of the opcodes that follow
			var b []byte
			if b, err = fixed(8); err == nil {
				if n = binary.LittleEndian.Uint64(b); n > uint64(remain-pos) {
					err = fmt.Errorf("pickle frame at byte %d declares %d bytes, more than the %d left", pos, n, remain-pos)
				}
			}
		default:
			err = fmt.Errorf("unknown pickle opcode 0x%02x at byte %d", op, pos-1)
		}
		if err != nil {
			return pos, err
		}
	}
}

// truncated words the end of a pickle before its STOP.
func truncated(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("pickle ends before its STOP opcode: %w", io.ErrUnexpectedEOF)
	}
	return err
}
