// Package weights reads the weight files of the networks genlens runs in
// pure Go (the ViTs of package vit, the BERT encoders of bert, DeBERTa)
// as float32 tensors, from file to kernel: Hugging Face's
// model.safetensors, torch.save state dicts (.pth, pytorch_model.bin;
// read by torchfile) and the parameters of TorchScript archives (OpenAI's
// CLIP .pt).
//
// # Cost before bytes
//
// A weights file is input, possibly hostile, and what it costs in memory
// is not its size: a safetensors header or a pickle names shapes, and the
// tensors of a .pth may view one storage many times over. Load prices
// every tensor it will copy out (its elements × 4 bytes, added to the
// bytes of the file's storages) against the matrix budget (membudget)
// before allocating it, and refuses the file with a one-line error naming
// it and the tensor at which the budget ran out. Only floating-point
// tensors are copied (integer ones are buffers such as position ids), and
// LoadKeys copies only the tensors a network asks for; no tensor passes
// through float64.
package weights
