//go:build race

package jobrun

// slow scales the waits of the tests: the race detector runs code 5 to
// 10 times slower, and more on a loaded machine.
const slow = 10
