package vit

import (
	"context"
	"fmt"
	"math"
	"sync"

	"github.com/genlens/genlens/internal/tensor/linalg"
	"github.com/genlens/genlens/internal/tensor/par"
	"github.com/genlens/genlens/internal/tensor/simdblas"
	"github.com/genlens/genlens/network/internal/transformer"
)

// groupColumns is the number of token columns a group of images aims
// at: enough that every weight matrix, read from memory once per group,
// is multiplied by a wide panel, few enough that a group's activations
// (a few MB for ViT-S) stay in the shared cache between the layers.
const groupColumns = 1024

// Forward runs the network on a batch of preprocessed images, each
// 3×Input×Input channels first, and returns one output vector per image
// (Config.Dim values). The batch runs as groups of images, each group
// through the whole network on one of up to workers goroutines (<= 0: one
// per CPU); with fewer groups than workers the products of a group are
// split over the rest. The output of an image does not depend on the
// batch it came in, nor on workers. Forward stops at the next block when
// ctx is cancelled. An output that is not finite, which only weights
// large enough to overflow float32 give, is an error naming the weights
// (transformer.CheckOutput).
func (m *Model) Forward(ctx context.Context, batch [][]float32, workers int) ([][]float32, error) {
	c := m.cfg
	for i, x := range batch {
		if len(x) != 3*c.Input*c.Input {
			return nil, fmt.Errorf("vit: image %d has %d values, want 3×%d×%d", i, len(x), c.Input, c.Input)
		}
	}
	if len(batch) == 0 {
		return [][]float32{}, nil
	}
	nw := par.Workers(workers, len(batch))
	g := max(1, groupColumns/c.Tokens())
	g = min(g, (len(batch)+nw-1)/nw)
	groups := (len(batch) + g - 1) / g
	split := max(1, nw/groups)
	out := make([][]float32, len(batch))
	err := par.For(ctx, groups, workers, func(ctx context.Context, i int) error {
		i0, i1 := i*g, min(len(batch), (i+1)*g)
		o, err := m.group(ctx, batch[i0:i1], split)
		copy(out[i0:i1], o)
		return err
	})
	if err != nil {
		return nil, err
	}
	if err := transformer.CheckOutputs(m.file, out); err != nil {
		return nil, err
	}
	return out, nil
}

// group runs a few images through the network together, their tokens
// side by side: every activation is a matrix of features (rows) by the
// tokens of all the images (columns, image-major), so that each linear
// layer is one product W·X with the weight, packed at load time, on the
// left. The matrices have paddedCols columns, the ones past the tokens
// carried along as any other (every column is computed on its own, so
// they change no token's values). split > 1 spreads the products over
// that many goroutines.
func (m *Model) group(ctx context.Context, imgs [][]float32, split int) ([][]float32, error) {
	c := m.cfg
	B, T, W := len(imgs), c.Tokens(), c.Width
	n := paddedCols(B * T)
	hidden := c.Hidden
	if c.SwiGLU {
		hidden = 2 * c.Hidden
	}
	gb, _ := m.bufs.Get().(*groupBufs)
	if gb == nil {
		gb = new(groupBufs)
	}
	defer m.bufs.Put(gb)
	x := growF32(&gb.x, W*n)
	h := growF32(&gb.h, W*n)
	qkv := growF32(&gb.qkv, 3*W*n)
	u := growF32(&gb.u, hidden*n)
	sc := &gb.attn
	m.embed(imgs, x, n, &gb.col)
	if m.lnPre != nil {
		m.lnPre.Cols(x, n, x)
	}
	for bi := range m.blocks {
		blk := &m.blocks[bi]
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		// Attention; its output goes to h, free once qkv is made. The
		// projection, LayerScale folded in, adds onto the residual.
		blk.ln1.Cols(x, n, h)
		blk.qkv.Mul(h, n, n, qkv, n, false, split)
		if err := m.attention(ctx, qkv, B, n, h, split, sc); err != nil {
			return nil, err
		}
		blk.proj.Mul(h, n, n, x, n, true, split)

		// Feed-forward, likewise.
		blk.ln2.Cols(x, n, h)
		blk.fc1.Mul(h, n, n, u, n, false, split)
		act := u
		switch {
		case blk.swigluHalf > 0:
			// SiLU(x₁)·x₂ over the first hh rows: row r reads rows r and
			// hh+r and writes row r, never a row still to be read.
			hh := blk.swigluHalf
			act = u[:hh*n]
			swiglu(u[:hh*n], u[hh*n:2*hh*n])
		case c.Family == DINOv2:
			gelu(u)
		default:
			quickGELU(u)
		}
		blk.fc2.Mul(act, n, n, x, n, true, split)
	}

	// Output: the class token after the final norm (and CLIP's
	// projection).
	out := make([][]float32, B)
	tok := make([]float32, W)
	cls := make([]float32, W)
	for b := 0; b < B; b++ {
		for r := range tok {
			tok[r] = x[r*n+b*T]
		}
		m.final.Rows(tok, cls)
		if m.proj == nil {
			out[b] = append([]float32(nil), cls...)
			continue
		}
		y := make([]float32, c.OutDim)
		linalg.Sgemm(false, false, 1, c.OutDim, W, 1, cls, W, m.proj, c.OutDim, 0, y, c.OutDim)
		if c.Normalize {
			var ss float64
			for _, v := range y {
				ss += float64(v) * float64(v)
			}
			if ss > 0 {
				inv := 1 / math.Sqrt(ss)
				for j, v := range y {
					y[j] = float32(float64(v) * inv)
				}
			}
		}
		out[b] = y
	}
	return out, nil
}

// groupBufs are the activations of a group, kept between groups in
// Model.bufs: fresh ones each time cost page faults (a tenth of the CPU
// time of ViT-S/14 went to the kernel), and a pool holds no more of them
// than there are groups running at once.
type groupBufs struct {
	x, h, qkv, u, col []float32
	attn              simdblas.AttnScratch
}

// growF32 returns (*b)[:n], reallocating when *b is shorter.
func growF32(b *[]float32, n int) []float32 {
	if cap(*b) < n {
		*b = make([]float32, n)
	}
	*b = (*b)[:n]
	return *b
}

// paddedCols is the number of columns of a group's matrices for n
// tokens: a whole number of the SGEMM kernel's 32-column tiles, so that no
// tile goes through its edge buffer, and not a multiple of 512, whose rows
// 2 KB apart or more map to the same few L1 sets (the kernel stores a
// 12-row tile of C and streams rows of the activations). At 1028
// columns the products ran at 126–147 GFLOP/s a core, at 1056 at 161–174.
func paddedCols(n int) int {
	p := (n + 31) &^ 31
	if p%512 == 0 {
		p += 32
	}
	return p
}

// embed writes the tokens of the images into the Width×n matrix x: the
// class token and, for each patch, the patch convolution (a product with
// the patch laid out as a column: channel, row, column, the order of the
// convolution weight) plus its bias, then the positional embedding.
func (m *Model) embed(imgs [][]float32, x []float32, n int, colBuf *[]float32) {
	c := m.cfg
	T, W, g, p, S := c.Tokens(), c.Width, c.Grid(), c.Patch, c.Input
	np := g * g
	col := growF32(colBuf, 3*p*p*np)
	// The columns past the tokens start from zero, whatever the
	// buffer held.
	for r := 0; r < W; r++ {
		clear(x[r*n+len(imgs)*T : (r+1)*n])
	}
	for b, img := range imgs {
		for ch := 0; ch < 3; ch++ {
			for i := 0; i < p; i++ {
				for j := 0; j < p; j++ {
					dst := col[((ch*p+i)*p+j)*np:][:np]
					for gy := 0; gy < g; gy++ {
						src := img[ch*S*S+(gy*p+i)*S+j:]
						d := dst[gy*g : (gy+1)*g]
						for gx := range d {
							d[gx] = src[gx*p]
						}
					}
				}
			}
		}
		m.patch.Mul(col, np, np, x[b*T+1:], n, false, 1)
		for r := 0; r < W; r++ {
			row := x[r*n+b*T:][:T]
			pos := m.posT[r*T:][:T]
			row[0] = m.cls[r] + pos[0]
			for t := 1; t < T; t++ {
				row[t] += pos[t]
			}
		}
	}
}

// attention computes softmax(QKᵀ)V for every image and head of the group
// from qkv (3·Width rows: the queries, already scaled by 1/√(Width/Heads),
// the keys, the values; B images of Tokens columns, leading dimension
// n), into the Width×n matrix att, one head of one image at a time
// (simdblas.Attention).
func (m *Model) attention(ctx context.Context, qkv []float32, B, n int, att []float32, split int, own *simdblas.AttnScratch) error {
	c := m.cfg
	T, W, heads := c.Tokens(), c.Width, c.Heads
	dh := W / heads
	task := func(t int, sc *simdblas.AttnScratch) {
		b, hd := t/heads, t%heads
		q := qkv[hd*dh*n+b*T:]
		k := qkv[(W+hd*dh)*n+b*T:]
		v := qkv[(2*W+hd*dh)*n+b*T:]
		simdblas.Attention(q, k, v, n, T, dh, att[hd*dh*n+b*T:], n, sc)
	}
	if split <= 1 {
		for t := 0; t < B*heads; t++ {
			task(t, own)
		}
		return nil
	}
	return par.For(ctx, B*heads, split, func(_ context.Context, t int) error {
		sc, _ := attnPool.Get().(*simdblas.AttnScratch)
		if sc == nil {
			sc = new(simdblas.AttnScratch)
		}
		task(t, sc)
		attnPool.Put(sc)
		return nil
	})
}

// attnPool holds the attention scratch of the goroutines a group's
// heads are split over.
var attnPool sync.Pool
