package suggest

// The flags of the tools genlens is checked against, as their users type
// them, with what genlens calls them: an unknown flag that is one of
// these is answered in genlens's words.

// PytorchFIDFlag reports whether name is a flag of `python -m
// pytorch_fid`, which genlens fid takes under the same name.
func PytorchFIDFlag(name string) bool {
	switch name {
	case "batch-size", "device", "num-workers", "save-stats", "dims":
		return true
	}
	return false
}

// TorchFidelityFlag returns what torch-fidelity's flag name (of its
// fidelity command) is in genlens, completing "torch-fidelity's --NAME
// ...": "is {fake} here", the request fields in braces (package
// internal/fields) for the command line to spell as its flags. Its input1 is the generated set and input2 the
// reference (its metric_prc.py: "features_1 is GENERATED"); its Inception
// preprocessing is genlens's --mode tf.
func TorchFidelityFlag(name string) (string, bool) {
	s, ok := torchFidelityFlags[name]
	return s, ok
}

var torchFidelityFlags = map[string]string{
	"input1": "is {fake} here", "input2": "is {real} here", "fid": "is {metrics} fid here", "kid": "is {metrics} kid here",
	"prc": "is {metrics} prdc here", "isc": "is the command 'genlens is DIR' here", "isc-splits": "is 'genlens is {splits} N' here",
	"prc-neighborhood": "is {nearest_k} here", "samples-find-deep": "is {recursive} here", "rng-seed": "is {seed} here",
	"feature-extractor-weights-path": "is {weights} here",
	"gpu":                            "has no counterpart: genlens runs on the CPU only (pure Go, no CUDA), and a second run reads the features from its cache",
	"cpu":                            "has no counterpart: genlens runs on the CPU only",
}
