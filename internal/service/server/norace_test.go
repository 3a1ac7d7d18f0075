//go:build !race

package server_test

// slow scales the waits of the tests (see race_test.go).
const slow = 1
