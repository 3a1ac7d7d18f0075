// Package vit is the Vision Transformer image encoders that recent
// generative-model metrics are computed on, in pure Go: DINOv2 (Oquab et
// al., "DINOv2: Learning Robust Visual Features without Supervision",
// TMLR 2024), whose ViT-L/14 CLS feature Stein et al. ("Exposing flaws of
// generative model evaluation metrics and their unfair treatment of
// diffusion models", NeurIPS 2023) recommend for the Fréchet distance,
// and the vision tower of OpenAI's CLIP (Radford et al., "Learning
// Transferable Visual Models From Natural Language Supervision", ICML
// 2021), on which clean-fid's CLIP-FID and CMMD (Jayasumana et al.,
// "Rethinking FID: Towards a Better Evaluation Metric for Image
// Generation", CVPR 2024) are defined.
//
// # Networks
//
// Both are pre-norm transformers over a class token and one token per
// non-overlapping patch (Dosovitskiy et al., "An Image is Worth 16x16
// Words", ICLR 2021):
//
//	x ← x + LS₁ ⊙ Attention(LN₁(x))
//	x ← x + LS₂ ⊙ FFN(LN₂(x))
//
// DINOv2 (facebookresearch/dinov2, as torch hub builds it): patch 14,
// LayerNorm eps 1e-6, biases on every linear layer, LayerScale (LS, a
// learned per-channel gain), FFN = fc2(GELU(fc1(x))) with the exact
// erf GELU, except ViT-g/14 whose FFN is SwiGLU: w3(SiLU(x₁) ⊙ x₂) with
// [x₁ x₂] = w12(x) and a hidden width of 4096. The positional embedding
// was trained at 518 px (a 37×37 grid plus the class position) and is
// resized to the input grid as the reference's interpolate_pos_encoding
// does: bicubic with A = −0.75, align_corners=False, no antialiasing,
// and scale_factor (g + 0.1)/37 rather than an output size, so the
// sampling positions are those of a 16.1-wide grid, not a 16-wide one
// (for a 224 input, g = 16). The output is the class token after the
// final LayerNorm (x_norm_clstoken).
//
// CLIP (openai/CLIP clip/model.py, VisionTransformer): a patch
// convolution without bias, the class embedding, the positional
// embedding, a LayerNorm before the transformer (ln_pre), LayerNorm eps
// 1e-5, no LayerScale, FFN = c_proj(QuickGELU(c_fc(x))) with
// QuickGELU(x) = x·σ(1.702x), then ln_post on the class token and the
// projection: encode_image. The projection is L2-normalised when the
// variant says so (CMMD's input).
//
// The forward pass keeps every activation as a matrix of features (rows)
// by tokens (columns), the tokens of a group of images side by side, so
// that each linear layer is one product W·X with the weight on the left,
// packed once at load time for internal/simdblas's micro-kernel
// (simdblas.Pack, MulAddPacked; linalg.Sgemm where that kernel does not
// run). The patch embedding is such a product over the patches laid out
// as columns (the convolution's stride equals its kernel, so im2col is a
// reshape). At load time the attention scale is folded into the query
// rows of the qkv weight and LayerScale into the layer before it, so the
// projection and the second FFN layer add straight onto the residual.
// Attention runs per image and head in blocks of about 128 queries whose
// keys×queries scores stay in L2 between its two products (linalg.Sgemm,
// that is simdblas): the softmax goes down each column and its sums
// divide the dh-row output rather than the scores. Each group (about 1024
// token columns) runs through the whole network on one goroutine, the
// groups of a batch on the CPUs side by side; softmax, GELU, QuickGELU
// and SiLU use a float32 exponential and Abramowitz and Stegun's erf, as
// PyTorch's vectorised CPU kernels do, and LayerNorm float64 statistics.
// Against PyTorch 1.13 running the reference modules on random-weight
// fixtures the features agree to float32 round-off (see
// testdata/make_fixtures.py).
//
// # Weights
//
// State dicts with the reference key names: the .pth files torch hub
// downloads for DINOv2 (dinov2_vitl14_pretrain.pth), or a CLIP state
// dict with OpenAI's names (visual.conv1.weight, ...; the "visual."
// prefix is optional); and Hugging
// Face's model.safetensors of openai/clip-vit-*, whose names are mapped
// to OpenAI's (q, k and v projections concatenated into in_proj,
// visual_projection transposed into proj); and OpenAI's released .pt
// files, TorchScript archives in float16, whose module tree gives the
// state-dict names (ReadTorchScript; the archive's code is not read).
// Every file is read by package weights, as float32, priced against the
// matrix budget before it is allocated.
//
// # Images
//
// Embedder is a network with one preset as a features.ImageEmbedder:
// package features lists, decodes and caches, and its pipeline calls
// Preprocess and Forward.
package vit
