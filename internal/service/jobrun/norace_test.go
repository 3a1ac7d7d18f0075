//go:build !race

package jobrun

// slow scales the waits of the tests (see race_test.go).
const slow = 1
