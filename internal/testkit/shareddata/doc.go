// Package shareddata locates the real data sets that live beside the
// repository (../shared/data, or $GENLENS_SHARED_DATA) for tests and
// benchmarks. The data are never copied into the repository; tests that
// need them skip with a message when they are absent.
package shareddata
