package inception

import "strings"

// OfficialWeightsSHA256 is the SHA-256 of pytorch-fid's
// pt_inception-2015-12-05-6726825d.pth (95,628,359 bytes), the FID
// Inception weights published FIDs were computed with; torch-fidelity's
// weights-inception-2015-12-05-6726825d.pth is the same file. The hash is
// the one several public projects pin for that download; its first 8 hex
// digits are the 6726825d of the file's name (PyTorch's hub convention).
const OfficialWeightsSHA256 = "6726825d0af5f729cebd5821db510b11b1cfad8faad88a03f1befd49fb9129b2"

// IsOfficialWeights reports whether a file's SHA-256 (hex) is that of the
// published FID Inception weights.
func IsOfficialWeights(sha256 string) bool {
	return strings.EqualFold(sha256, OfficialWeightsSHA256)
}
