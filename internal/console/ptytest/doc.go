// Package ptytest runs code under a pseudo-terminal for the tests of
// what the command line draws on a terminal (progress bars), and replays
// what it drew as a terminal shows it.
package ptytest
