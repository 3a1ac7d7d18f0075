// Package atomicfile writes files so that readers never see them half
// written and a failed write never clobbers what was there: data goes to a
// temporary file in the same directory (rename is atomic only within one
// file system), is synced, and is renamed over the target once complete.
// Every genlens writer (arrays, tables, charts, reports) goes through it.
package atomicfile
