//go:build openblas

package frechet

// openblas reports whether this binary was built with -tags openblas; see
// backend_purego.go.
const openblas = true
