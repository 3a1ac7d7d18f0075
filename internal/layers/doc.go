// Package layers holds no code: its test checks, over `go list`, the
// import rules that ARCHITECTURE.md states, so that the map of the code
// and the code cannot drift apart.
package layers
