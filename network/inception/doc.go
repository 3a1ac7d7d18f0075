// Package inception is the Inception-v3 network that FID, IS and KID are
// defined on, in pure Go: the FID variant that pytorch-fid builds
// (Szegedy et al., "Rethinking the Inception Architecture for Computer
// Vision", CVPR 2016, as frozen in TensorFlow's 2015-12-05 graph and used
// by Heusel et al., NeurIPS 2017), so that features computed here can be
// compared with statistics that pytorch-fid or torch-fidelity wrote.
//
// # Network
//
// torchvision's inception_v3 with 1008 classes and no auxiliary head,
// with pytorch-fid's replacement blocks: Mixed_5b–5d are FIDInceptionA,
// 6b–6e FIDInceptionC, 7b FIDInceptionE_1 and 7c FIDInceptionE_2. Their
// average pools exclude the padding from the divisor
// (count_include_pad=False), and 7c's pool branch is a max pool: that is
// what the TensorFlow graph computed, and torchvision's stock blocks
// differ on both, moving FID by more than the noise of a typical
// comparison. Every BasicConv2d (convolution without bias, BatchNorm
// with eps 0.001, ReLU) has its BatchNorm folded into the convolution at
// load time.
//
// Convolutions run as matrix products: a 1×1 convolution is the weight
// matrix times the feature map, larger kernels go through im2col; each
// product is linalg.Sgemm in float32, so -tags openblas runs OpenBLAS's
// SGEMM and the pure-Go build an AVX-512 or AVX2/FMA kernel, the widest the CPU has.
// In the pure-Go build the 3×3 stride-1 convolutions of the stem and of
// Mixed_5/6a take Winograd's F(4×4, 3×3) form (36 products of transformed
// weights and patches), and the im2col matrices are written straight into
// the kernel's packed panels.
// The 1×7 and 7×1 convolutions of Mixed_6b–e and Mixed_7a take the
// one-dimensional form F(4, 7) (10 multiplications per channel pair and
// 4 outputs, where a direct convolution does 28), the 1×3 and 3×1 of
// Mixed_7b/c F(2, 3).
// Forward runs one image per goroutine (internal/par), each with its own
// buffers. Against PyTorch on the shared random-weight fixture the
// features agree to about 1e-6.
//
// # Outputs
//
// Pooled features of 64, 192, 768 and 2048 dimensions (the first three
// average-pooled over their maps as pytorch-fid's get_activations does;
// 2048 is the pool3 feature of FID), logits (fc, 1008 classes) and
// logits_unbiased (fc without bias, torch-fidelity's input to its
// Inception Score). Forward gives them all; ForwardTo, which the Embedder
// uses, runs only the blocks its output needs, as pytorch-fid's
// InceptionV3 does for a low --dims.
//
// # Weights
//
// The network reads the PyTorch state dict pytorch-fid downloads
// (pt_inception-2015-12-05-6726825d.pth), legacy or zip serialisation,
// through package torchfile, which checks every size the file claims
// against the bytes that hold it before anything is allocated.
// ResolveWeights finds it: an explicit path, then
// $GENLENS_WEIGHTS, then genlens's cache directory, else a one-time
// download checked against the file's published SHA-256. Offline, the
// error says which URL to fetch by hand and where to put the file.
//
// # Preprocessing
//
// Three pipelines, chosen by Mode. ModePyTorchFID: PIL's convert("RGB"),
// values in [0, 1], torch's bilinear resize to 299×299
// (align_corners=False, no antialiasing), then 2x − 1. ModeTF:
// torch-fidelity's port of the TensorFlow 1.x bilinear resize on uint8
// values, then (x − 128)/128, which reproduces the original TensorFlow
// FID code. ModeClean: clean-fid's default (Parmar et al., "On Aliased
// Resizing and Surprising Subtleties in GAN Evaluation", CVPR 2022): each
// uint8 channel resized as a float32 image by Pillow's bicubic filter,
// antialiased when downscaling (package resample, bit for bit), clipped
// to [0, 255], then (x − 128)/128. The first two differ by up to about
// 0.04 on pool3 features of the same image, and clean by as much from
// either; statistics must come from the same pipeline to be compared.
//
// # Images
//
// Folders are listed, images decoded and converted to RGB, and features
// cached by package features, whose pipeline runs this network through
// Embedder (the features.ImageEmbedder of Inception, one output and one
// mode at a time).
//
// Images come from folders of png, jpg/jpeg, bmp, tif/tiff, webp, ppm and
// pgm files (extensions in any case), in sorted order, optionally
// recursive, of mixed sizes, decoded by features.DecodeImage to the pixels
// PIL's Image.open(f).convert("RGB") gives (JPEG as libjpeg-turbo decodes
// it): headers are checked before decoding (an image over
// features.MaxImagePixels is refused) and non-regular files are refused
// before they are opened.
package inception
