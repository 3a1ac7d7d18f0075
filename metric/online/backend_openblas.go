//go:build openblas

package online

// openblas reports whether this binary was built with -tags openblas; see
// backend_purego.go.
const openblas = true
