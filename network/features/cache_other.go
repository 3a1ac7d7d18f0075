//go:build !unix

package features

// entryOpenFlags: elsewhere the Lstat before the open is the check.
const entryOpenFlags = 0
