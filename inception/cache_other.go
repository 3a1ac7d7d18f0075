//go:build !unix

package inception

// entryOpenFlags: elsewhere the Lstat before the open is the check.
const entryOpenFlags = 0
