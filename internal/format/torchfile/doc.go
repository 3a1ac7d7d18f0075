// Package torchfile reads tensors from PyTorch's serialisation formats,
// safely: the state dicts torch.save writes (.pt/.pth, the legacy pickle
// format before torch 1.6 and the zip format after it) and the
// parameters of TorchScript archives (torch.jit.save, such as OpenAI's
// released CLIP .pt files), as float64 tensors in row-major order whatever
// the stored dtype (LoadStateDict, ReadTorchScript; package inception), or
// as Views still inside their storages (OpenStateDict, OpenTorchScript),
// which say what copying them out costs before any copy is made, and give
// float32 without a float64 step (package weights, for the ViTs and the
// text models). The networks only map names to layers.
//
// # Formats
//
// LoadStateDict reads a state dict: an OrderedDict (or dict) of tensors,
// each rebuilt by torch._utils._rebuild_tensor_v2 from a storage. In the
// zip format the pickle is <archive>/data.pkl and each storage the record
// <archive>/data/<key>; in the legacy format five pickles (magic number,
// protocol version, system information, the object, the storage keys)
// are followed by each storage as an 8-byte element count and its
// elements. ReadTorchScript walks a TorchScript module tree
// (<archive>/data.pkl, objects of the archive's __torch__ classes) and
// gives its tensors the dotted names module.state_dict() would.
// Views (a storage offset, strides) come out as the values torch prints.
//
// # What is refused, and why
//
// A weights file is input, possibly hostile, and unpickling runs what
// the file names. Pickles go through gopickle's unpickler, but:
//
//   - Besides the few Python types gopickle implements in Go
//     (collections.OrderedDict, object, copy_reg._reconstructor),
//     classes come from one allowlist: the tensor rebuilder and the
//     storage types (float16/32/64, bfloat16, int8/16/32/64, uint8; bool
//     storages unpickle, but a bool tensor is refused when it is copied
//     out), plus, in a TorchScript archive, its own __torch__ module
//     classes, which only hold attributes. Any other class is an error,
//     so nothing a pickle names runs Python's code or any other; the
//     archive's code/ directory is never read.
//   - Every pickle is scanned opcode by opcode before it is unpickled:
//     a length an opcode declares (a string, a bytes object, a frame)
//     must fit in the bytes that remain, because gopickle allocates it
//     before reading (15 bytes could ask for a terabyte). An unknown
//     opcode is an error, and a pickle is at most 64 MiB.
//   - Storages are allocated here, not by gopickle: an element count must
//     fill its zip record exactly, or fit in what remains of a legacy
//     file, and the storages of a file fit in the matrix budget
//     (membudget), before anything is allocated; a zip record may not claim to
//     decompress by more than dataio.MaxCompressionRatio.
//   - A tensor's shape, strides and offset must stay inside its storage
//     (no overflow, no broadcast views), and the tensors of a file may
//     read their storages at most a few times over, so many small views
//     of one large storage cannot ask for a copy each.
//   - float16 is converted exactly (Float16), subnormals included, which
//     gopickle's conversion gets wrong.
//   - A TorchScript archive given to LoadStateDict is refused with a
//     message saying what it is, as are storage views of pre-0.4 files
//     and the ancient tar format.
//
// Every problem with a file is a one-line *fault.InputError naming it;
// a panic of the unpickler on malformed input is recovered into one.
// Loading allocates about what the file holds (FuzzLoadStateDict checks
// both).
package torchfile
