package vit

import (
	"context"
	"fmt"
	"math"

	"genlens/internal/par"
	"genlens/linalg"
)

// chunkValues bounds the widest activation of one pass over the batch
// (tokens × FFN width), in float32 values: 16M values, 64 MB. Larger
// batches run as several passes.
const chunkValues = 1 << 24

// Forward runs the network on a batch of preprocessed images, each
// 3×Input×Input channels first, and returns one output vector per image
// (Config.Dim values). The linear layers run as one GEMM over the tokens
// of all images of a pass (the GEMM spreads over the CPUs); attention and
// the element-wise steps run on up to workers goroutines (<= 0: one per
// CPU). It stops at the next block when ctx is cancelled.
func (m *Model) Forward(ctx context.Context, batch [][]float32, workers int) ([][]float32, error) {
	c := m.cfg
	for i, x := range batch {
		if len(x) != 3*c.Input*c.Input {
			return nil, fmt.Errorf("vit: image %d has %d values, want 3×%d×%d", i, len(x), c.Input, c.Input)
		}
	}
	widest := max(3*c.Width, c.Hidden)
	if c.SwiGLU {
		widest = 2 * c.Hidden
	}
	per := max(1, chunkValues/(c.Tokens()*widest))
	out := make([][]float32, 0, len(batch))
	for i := 0; i < len(batch); i += per {
		o, err := m.pass(ctx, batch[i:min(len(batch), i+per)], workers)
		if err != nil {
			return nil, err
		}
		out = append(out, o...)
	}
	return out, nil
}

// pass runs one group of images through the network together.
func (m *Model) pass(ctx context.Context, imgs [][]float32, workers int) ([][]float32, error) {
	c := m.cfg
	B, T, W, g, p := len(imgs), c.Tokens(), c.Width, c.Grid(), c.Patch
	n := B * T
	x := make([]float32, n*W)
	h := make([]float32, n*W)

	// Patch embedding: every patch of every image as a row (channel,
	// row, column, the order of the convolution weight), times Wᵀ.
	np := B * g * g
	pm := make([]float32, np*3*p*p)
	err := par.For(ctx, B, workers, func(_ context.Context, b int) error {
		img, S := imgs[b], c.Input
		for gy := 0; gy < g; gy++ {
			for gx := 0; gx < g; gx++ {
				row := pm[((b*g+gy)*g+gx)*3*p*p:]
				for ch := 0; ch < 3; ch++ {
					for i := 0; i < p; i++ {
						src := img[ch*S*S+(gy*p+i)*S+gx*p:]
						copy(row[(ch*p+i)*p:(ch*p+i+1)*p], src[:p])
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	emb := make([]float32, np*W)
	m.patch.apply(pm, np, emb)
	pm = nil
	for b := 0; b < B; b++ {
		xb := x[b*T*W : (b+1)*T*W]
		for j := 0; j < W; j++ {
			xb[j] = m.cls[j] + m.pos[j]
		}
		for k := 0; k < g*g; k++ {
			e := emb[(b*g*g+k)*W : (b*g*g+k+1)*W]
			dst, pos := xb[(1+k)*W:(2+k)*W], m.pos[(1+k)*W:(2+k)*W]
			for j := range dst {
				dst[j] = e[j] + pos[j]
			}
		}
	}
	emb = nil
	eps := c.Eps()
	if m.lnPre != nil {
		if err := rows(ctx, n, workers, func(i0, i1 int) { layerNorm(x[i0*W:i1*W], W, *m.lnPre, eps, x[i0*W:i1*W]) }); err != nil {
			return nil, err
		}
	}

	qkv := make([]float32, n*3*W)
	att := make([]float32, n*W)
	o := make([]float32, n*W)
	hidden := c.Hidden
	if c.SwiGLU {
		hidden = 2 * c.Hidden
	}
	u := make([]float32, n*hidden)
	heads, dh := c.Heads, W/c.Heads
	scale := float32(1 / math.Sqrt(float64(dh)))
	for _, blk := range m.blocks {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		// Attention.
		if err := rows(ctx, n, workers, func(i0, i1 int) { layerNorm(x[i0*W:i1*W], W, blk.ln1, eps, h[i0*W:i1*W]) }); err != nil {
			return nil, err
		}
		blk.qkv.apply(h, n, qkv)
		err := par.For(ctx, B*heads, workers, func(_ context.Context, t int) error {
			b, hd := t/heads, t%heads
			base := b * T * 3 * W
			q := qkv[base+hd*dh:]
			k := qkv[base+W+hd*dh:]
			v := qkv[base+2*W+hd*dh:]
			s := make([]float32, T*T)
			linalg.Sgemm(false, true, T, T, dh, scale, q, 3*W, k, 3*W, 0, s, T)
			for r := 0; r < T; r++ {
				softmax(s[r*T : (r+1)*T])
			}
			linalg.Sgemm(false, false, T, dh, T, 1, s, T, v, 3*W, 0, att[b*T*W+hd*dh:], W)
			return nil
		})
		if err != nil {
			return nil, err
		}
		blk.proj.apply(att, n, o)
		addScaled(x, o, blk.ls1, W)

		// Feed-forward.
		if err := rows(ctx, n, workers, func(i0, i1 int) { layerNorm(x[i0*W:i1*W], W, blk.ln2, eps, h[i0*W:i1*W]) }); err != nil {
			return nil, err
		}
		blk.fc1.apply(h, n, u)
		act := u
		switch {
		case blk.swigluHalf > 0:
			hh := blk.swigluHalf
			act = u[:n*hh]
			// SiLU(x₁)·x₂ per token, written over the first n·hh values:
			// row r reads u[r·2hh:] and writes act[r·hh:], never ahead of
			// what it has read.
			for r := 0; r < n; r++ {
				x12 := u[r*2*hh : (r+1)*2*hh]
				dst := act[r*hh : (r+1)*hh]
				for j := 0; j < hh; j++ {
					a := x12[j]
					dst[j] = float32(a/(1+float32(math.Exp(float64(-a))))) * x12[hh+j]
				}
			}
		case c.Family == DINOv2:
			if err := rows(ctx, n, workers, func(i0, i1 int) { gelu(u[i0*hidden : i1*hidden]) }); err != nil {
				return nil, err
			}
		default:
			if err := rows(ctx, n, workers, func(i0, i1 int) { quickGELU(u[i0*hidden : i1*hidden]) }); err != nil {
				return nil, err
			}
		}
		blk.fc2.apply(act, n, o)
		addScaled(x, o, blk.ls2, W)
	}

	// Output: the class token after the final norm (and CLIP's
	// projection).
	out := make([][]float32, B)
	cls := make([]float32, W)
	for b := 0; b < B; b++ {
		layerNorm(x[b*T*W:b*T*W+W], W, m.final, eps, cls)
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

// apply computes y = x·Wᵀ + b for n rows of x, PyTorch's nn.Linear.
func (l linear) apply(x []float32, n int, y []float32) {
	y = y[:n*l.out]
	beta := float32(0)
	if l.b != nil {
		for r := 0; r < n; r++ {
			copy(y[r*l.out:(r+1)*l.out], l.b)
		}
		beta = 1
	}
	linalg.Sgemm(false, true, n, l.out, l.in, 1, x, l.in, l.w, l.in, beta, y, l.out)
}

// rows calls fn on contiguous ranges of n rows on up to workers
// goroutines.
func rows(ctx context.Context, n, workers int, fn func(i0, i1 int)) error {
	parts := min(n, 4*par.Workers(workers, n))
	return par.For(ctx, parts, workers, func(_ context.Context, i int) error {
		fn(i*n/parts, (i+1)*n/parts)
		return nil
	})
}

// layerNorm normalises every w-wide row of x into dst (which may be x):
// (x − mean)/√(var + eps)·g + b with the biased variance, the statistics
// in float64.
func layerNorm(x []float32, w int, nm norm, eps float32, dst []float32) {
	for r := 0; r < len(x)/w; r++ {
		row, out := x[r*w:(r+1)*w], dst[r*w:(r+1)*w]
		var s float64
		for _, v := range row {
			s += float64(v)
		}
		mean := s / float64(w)
		var ss float64
		for _, v := range row {
			d := float64(v) - mean
			ss += d * d
		}
		inv := 1 / math.Sqrt(ss/float64(w)+float64(eps))
		for j, v := range row {
			out[j] = float32((float64(v)-mean)*inv)*nm.g[j] + nm.b[j]
		}
	}
}

// softmax replaces a row of scores by exp(s − max)/Σ exp(s − max).
func softmax(s []float32) {
	mx := s[0]
	for _, v := range s[1:] {
		mx = max(mx, v)
	}
	var sum float64
	for j, v := range s {
		e := float32(math.Exp(float64(v - mx)))
		s[j] = e
		sum += float64(e)
	}
	inv := float32(1 / sum)
	for j := range s {
		s[j] *= inv
	}
}

// gelu is the exact GELU, x·Φ(x) = x/2·(1 + erf(x/√2)), nn.GELU's
// default.
func gelu(x []float32) {
	for i, v := range x {
		x[i] = float32(0.5 * float64(v) * (1 + math.Erf(float64(v)*math.Sqrt2/2)))
	}
}

// quickGELU is CLIP's x·σ(1.702x).
func quickGELU(x []float32) {
	for i, v := range x {
		x[i] = float32(float64(v) / (1 + math.Exp(-1.702*float64(v))))
	}
}

// addScaled adds o to x row by row, times the LayerScale gains when
// there are any.
func addScaled(x, o, ls []float32, w int) {
	if ls == nil {
		for i, v := range o {
			x[i] += v
		}
		return
	}
	for r := 0; r < len(x)/w; r++ {
		xr, or := x[r*w:(r+1)*w], o[r*w:(r+1)*w]
		for j, v := range or {
			xr[j] += v * ls[j]
		}
	}
}
